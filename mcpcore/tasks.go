package mcpcore

import (
	"context"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// Long-running work (docs/tasks.md). A call of a command the endpoint's task
// policy names becomes a task: for a client that declared the Tasks
// extension on the request, tools/call answers a CreateTaskResult and
// tasks/get and tasks/cancel follow it; for any other client, when the
// endpoint publishes the job family, the call answers at once with outcome
// started and a taskId, and three ordinary tools report and cancel it.
// Without either, the call runs as a direct call. The work itself is the
// TaskHost's (the tasks package over the store).

// TasksExtension is the Tasks extension's identifier.
const TasksExtension = "io.modelcontextprotocol/tasks"

// TaskPollIntervalMs is the polling interval suggested to clients.
const TaskPollIntervalMs = 1000

const codeMissingCapability = -32021

// Job family command ids: in the built-in namespace, so no extension
// command can have them; their tool names follow the endpoint's mode.
const (
	jobStatus = policy.JobToolStatus
	jobResult = policy.JobToolResult
	jobCancel = policy.JobToolCancel
)

// OutcomeStarted is the job family's outcome of a call that became a task.
const OutcomeStarted = "started"

// TaskCaller is who a task belongs to: only the same endpoint and agent
// may see or cancel it. Issuer is an oauth agent's identity provider, ""
// for a Rukh agent: an identity provider's agent never shares tasks with
// a Rukh agent of the same name.
type TaskCaller struct{ Endpoint, Agent, Issuer string }

// TaskStart is what a task is started with.
type TaskStart struct {
	Caller   TaskCaller
	Command  string
	Tool     string
	TTLMs    int64
	MaxTasks int
	Timeout  time.Duration
}

// TaskInfo is a task as the protocol reports it.
type TaskInfo struct {
	ID            string
	Status        string // working, completed, failed, cancelled
	StatusMessage string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	TTLMs         int64
	Result        *kernel.Result // once the task has ended
}

// TaskHost runs and reports tasks. Errors are kernel errors: CodeNotFound
// for an unknown, expired or foreign task, CodeUnavailable for a full
// endpoint (maxTasks).
type TaskHost interface {
	// Start records the task durably, then runs inv in the background;
	// ctx carries the call's values (what it pinned), not its lifetime.
	Start(ctx context.Context, t TaskStart, inv *kernel.Invocation) (TaskInfo, error)
	Get(id string, who TaskCaller) (TaskInfo, error)
	Cancel(id string, who TaskCaller) (TaskInfo, error)
}

// taskPolicy is the launch binding's task policy when a host runs tasks.
func (s *Session) taskPolicy() *policy.Tasks {
	if s.cfg.Tasks == nil {
		return nil
	}
	s.bmu.Lock()
	defer s.bmu.Unlock()
	if s.binding == nil {
		return nil
	}
	return s.binding.Tasks
}

// tasksAdvertised reports whether discover offers the extension. A
// binding not yet fixed (nothing was published at start) is fixed first.
func (s *Session) tasksAdvertised() bool {
	if s.cfg.Tasks != nil && s.boundLaunch() == nil {
		_ = s.current(func(uint64, Catalog) error { return nil })
	}
	return s.taskPolicy() != nil
}

// declaresTasks reports whether a modern request's client capabilities
// include the Tasks extension.
func declaresTasks(req *Request) bool {
	caps, ok := req.meta[metaClientCapabilities]
	if !ok {
		return false
	}
	var c struct {
		Extensions map[string]jsontext.Value `json:"extensions"`
	}
	if json.Unmarshal(caps, &c, json.RejectUnknownMembers(false)) != nil {
		return false
	}
	_, ok = c.Extensions[TasksExtension]
	return ok
}

func (s *Session) taskCaller(req *Request) TaskCaller {
	s.bmu.Lock()
	b := s.binding
	s.bmu.Unlock()
	c := s.caller(req, b)
	return TaskCaller{Endpoint: c.Endpoint, Agent: c.Agent, Issuer: c.Issuer}
}

// refuseDirect is the -32021 of a call of a command that may only run as
// a task (tasks.required) when the call cannot become one: the client did
// not declare the extension and the endpoint publishes no job family. It
// comes before the input check and any spending of a credential: the
// call would not run whatever its arguments. Nil: the call goes on.
func (s *Session) refuseDirect(req *Request, e era, tool, command string) *rpcError {
	s.bmu.Lock()
	b := s.binding
	s.bmu.Unlock()
	if b == nil || !b.Tasks.Requires(command) {
		return nil
	}
	if s.cfg.Tasks != nil && (b.Tasks.JobTools || e == eraModern && declaresTasks(req)) {
		return nil
	}
	msg := "tool " + strconv.Quote(tool) + " may only run as a task: declare the " + TasksExtension + " extension in _meta clientCapabilities extensions"
	if e != eraModern {
		msg = "tool " + strconv.Quote(tool) + " may only run as a task, which needs the " + TasksExtension + " extension of protocol " + ModernVersion + ": this connection's protocol has no way to declare it"
	}
	rerr := missingTasksCapability()
	rerr.message = msg
	return rerr
}

// startTask runs an admitted-by-input call as a task when the policy and
// the client allow it; it reports whether it answered the request.
func (s *Session) startTask(req *Request, e era, name string, revN uint64, bc *Resolved, inv *kernel.Invocation) bool {
	tp := s.taskPolicy()
	if !tp.Allows(bc.Command.ID) {
		return false
	}
	ext := e == eraModern && declaresTasks(req)
	if !ext && !tp.JobTools {
		return false
	}
	ctx := withPinned(context.Background(), Pinned{Revision: revN, Tool: name, Release: bc.Release})
	t, err := s.cfg.Tasks.Start(ctx, TaskStart{
		Caller: s.taskCaller(req), Command: bc.Command.ID, Tool: name,
		TTLMs: tp.TTLMs, MaxTasks: tp.MaxTasks, Timeout: time.Duration(tp.TimeoutMs) * time.Millisecond,
	}, inv)
	if err != nil {
		reason := "the task could not be started"
		if kernel.ErrorCode(err) == kernel.CodeUnavailable {
			reason = "too many tasks on this endpoint (maxTasks): wait for one to end and expire, or cancel one"
		} else {
			s.logf("mcp: task of %s: %v", name, err)
		}
		s.reply(req, e, s.rejected(inv.ID, reason))
		return true
	}
	if ext {
		s.reply(req, e, result{body: appendTask(nil, &t, false), resultType: "task"})
		return true
	}
	env := []byte(`{"invocationId":`)
	env = appendString(env, inv.ID)
	env = append(env, `,"outcome":"`+OutcomeStarted+`","taskId":`...)
	env = appendString(env, t.ID)
	env = append(env, '}')
	s.reply(req, e, toolResult(env, false))
	return true
}

// appendTask writes the members of a Task (and, detailed, of a
// DetailedTask: the final tool result of a completed task).
func appendTask(dst []byte, t *TaskInfo, detailed bool) []byte {
	dst = append(dst, `"taskId":`...)
	dst = appendString(dst, t.ID)
	dst = append(dst, `,"status":`...)
	dst = appendString(dst, t.Status)
	if t.StatusMessage != "" {
		dst = append(dst, `,"statusMessage":`...)
		dst = appendString(dst, t.StatusMessage)
	}
	dst = append(dst, `,"createdAt":`...)
	dst = appendString(dst, t.CreatedAt.UTC().Format(time.RFC3339Nano))
	dst = append(dst, `,"lastUpdatedAt":`...)
	dst = appendString(dst, t.UpdatedAt.UTC().Format(time.RFC3339Nano))
	dst = append(dst, `,"ttlMs":`...)
	dst = strconv.AppendInt(dst, t.TTLMs, 10)
	dst = append(dst, `,"pollIntervalMs":`...)
	dst = strconv.AppendInt(dst, TaskPollIntervalMs, 10)
	if detailed && t.Result != nil && t.Status == "completed" {
		dst = append(dst, `,"result":{`...)
		dst = append(dst, callResult(t.Result).body...)
		dst = append(dst, '}')
	}
	if detailed && t.Status == "failed" {
		// A failed task is one whose tool result rukh could not produce
		// or keep: the JSON-RPC error a direct call gets for that.
		msg := t.StatusMessage
		if msg == "" {
			msg = "internal error"
		}
		dst = append(dst, `,"error":{"code":`...)
		dst = strconv.AppendInt(dst, codeInternalError, 10)
		dst = append(dst, `,"message":`...)
		dst = appendString(dst, msg)
		dst = append(dst, '}')
	}
	return dst
}

// toolResult is a tools/call result carrying obj as structuredContent and
// as its one text block.
func toolResult(obj []byte, isError bool) result {
	body := append([]byte(`"content":[{"type":"text","text":`), appendString(nil, string(obj))...)
	body = append(body, `}],"structuredContent":`...)
	body = append(body, obj...)
	body = append(body, `,"isError":`...)
	body = strconv.AppendBool(body, isError)
	return result{body: body}
}

// textError is a tools/call error result with one text block.
func textError(msg string) result {
	body := append([]byte(`"content":[{"type":"text","text":`), appendString(nil, msg)...)
	return result{body: append(body, `}],"isError":true`...)}
}

// missingTasksCapability is the -32021 of a request that needs the
// extension its client did not declare.
func missingTasksCapability() *rpcError {
	rerr := newError(codeMissingCapability, "this request needs the "+TasksExtension+" extension: declare it in _meta clientCapabilities extensions")
	rerr.data = []byte(`{"requiredCapabilities":{"extensions":{"` + TasksExtension + `":{}}}}`)
	return rerr
}

// taskIDsWithout is the -32021 the extension requires for a
// subscriptions/listen that asks for notifications/tasks (taskIds)
// without declaring it, on an endpoint that offers it. rukh sends no
// notifications/tasks (they are optional): for a client that declared it,
// taskIds is left out of the acknowledgement like any member not honoured.
func (s *Session) taskIDsWithout(req *Request) *rpcError {
	var f struct {
		TaskIDs jsontext.Value `json:"taskIds"`
	}
	if json.Unmarshal(req.params.Notifications, &f, json.RejectUnknownMembers(false)) != nil || f.TaskIDs == nil || declaresTasks(req) || !s.tasksAdvertised() {
		return nil
	}
	return missingTasksCapability()
}

// handleTaskMethod answers tasks/get, tasks/update and tasks/cancel
// (modern era). rukh never asks for input, so no task has outstanding
// inputRequests: tasks/update checks its params and the task, then acks
// and ignores the responses, as the extension says of responses to keys
// not outstanding.
func (s *Session) handleTaskMethod(req *Request) {
	if !s.tasksAdvertised() || !declaresTasks(req) {
		s.replyError(req, missingTasksCapability())
		return
	}
	id, ok := stringParam(req.params.TaskID)
	if !ok {
		s.replyError(req, newError(codeInvalidParams, "invalid params: taskId must be a string"))
		return
	}
	if req.method == "tasks/update" && req.params.InputResponses.Kind() != '{' {
		s.replyError(req, newError(codeInvalidParams, "invalid params: inputResponses must be an object"))
		return
	}
	who := s.taskCaller(req)
	var t TaskInfo
	var err error
	if req.method == "tasks/cancel" {
		t, err = s.cfg.Tasks.Cancel(id, who)
	} else {
		t, err = s.cfg.Tasks.Get(id, who)
	}
	if err != nil {
		if kernel.ErrorCode(err) == kernel.CodeNotFound {
			s.replyError(req, newError(codeInvalidParams, "unknown or expired task "+strconv.Quote(id)))
			return
		}
		s.logf("mcp: %s %s: %v", req.method, id, err)
		s.replyError(req, newError(codeInternalError, "internal error"))
		return
	}
	if req.method != "tasks/get" {
		s.reply(req, eraModern, result{})
		return
	}
	s.reply(req, eraModern, result{body: appendTask(nil, &t, true)})
}

// jobTools returns the job family's tool names and wires, when the
// endpoint publishes it; names do not change with revisions.
func (s *Session) jobTools() []jobTool {
	tp := s.taskPolicy()
	if tp == nil || !tp.JobTools {
		return nil
	}
	s.bmu.Lock()
	b := s.binding
	s.bmu.Unlock()
	out := make([]jobTool, 0, 3)
	for _, j := range jobToolDefs {
		out = append(out, jobTool{id: j.id, name: policy.JobToolName(b.ToolNames, b.Namespace, j.id), body: j.body})
	}
	return out
}

type jobTool struct{ id, name, body string }

// JobToolWire is the tools/list entry of job tool id (policy.JobToolIDs)
// named name, as served.
func JobToolWire(id, name string) []byte {
	for _, j := range jobToolDefs {
		if j.id == id {
			return policy.AppendToolWire(nil, name, []byte(j.body))
		}
	}
	return nil
}

const taskIDInput = `"inputSchema":{"type":"object","properties":{"taskId":{"type":"string","description":"the taskId a started call returned"}},"required":["taskId"],"additionalProperties":false}`

const taskStatusOutput = `"outputSchema":{"type":"object","properties":{"taskId":{"type":"string"},` +
	`"status":{"type":"string","enum":["working","completed","failed","cancelled"]},"statusMessage":{"type":"string"},` +
	`"createdAt":{"type":"string"},"lastUpdatedAt":{"type":"string"},"ttlMs":{"type":"integer"},"pollIntervalMs":{"type":"integer"}},` +
	`"required":["taskId","status","createdAt","lastUpdatedAt","ttlMs"],"additionalProperties":false}`

var jobToolDefs = []jobTool{
	{id: jobStatus, body: `{"title":"Task status","description":"The status of a task a call started (outcome started): working, completed, failed or cancelled, with its latest status message.",` +
		taskIDInput + `,` + taskStatusOutput + `,"annotations":{"readOnlyHint":true}}`},
	{id: jobResult, body: `{"title":"Task result","description":"The result of a finished task: the same envelope the call would have returned had it run to its end directly. An error while the task is still working.",` +
		taskIDInput + `,"outputSchema":{"type":"object","properties":{"invocationId":{"type":"string"},"outcome":{"type":"string","enum":["succeeded","command_failed","execution_failed","rejected","cancelled"]},"reason":{"type":"string"},"commandResult":{"type":"object"}},"required":["invocationId","outcome"],"additionalProperties":false},"annotations":{"readOnlyHint":true}}`},
	{id: jobCancel, body: `{"title":"Cancel task","description":"Stop a working task; its status becomes cancelled. A finished task is left as it is.",` +
		taskIDInput + `,` + taskStatusOutput + `,"annotations":{"destructiveHint":false,"idempotentHint":true}}`},
}

// appendJobTools adds the job family to the last page of tools/list.
func (s *Session) appendJobTools(body []byte, first bool) []byte {
	for _, j := range s.jobTools() {
		if !first {
			body = append(body, ',')
		}
		first = false
		body = policy.AppendToolWire(body, j.name, []byte(j.body))
	}
	return body
}

// callJobTool answers a call of a job family tool; false: name is not one.
func (s *Session) callJobTool(req *Request, e era, name string) bool {
	var id string
	for _, j := range s.jobTools() {
		if j.name == name {
			id = j.id
		}
	}
	if id == "" {
		return false
	}
	var args struct {
		TaskID string `json:"taskId"`
	}
	if len(req.params.Arguments) == 0 || json.Unmarshal(req.params.Arguments, &args, json.RejectUnknownMembers(true)) != nil || args.TaskID == "" {
		s.reply(req, e, textError(`invalid input: want {"taskId": "…"}, the taskId a started call returned`))
		return true
	}
	who := s.taskCaller(req)
	var t TaskInfo
	var err error
	if id == jobCancel {
		t, err = s.cfg.Tasks.Cancel(args.TaskID, who)
	} else {
		t, err = s.cfg.Tasks.Get(args.TaskID, who)
	}
	if err != nil {
		if kernel.ErrorCode(err) == kernel.CodeNotFound {
			s.reply(req, e, textError("no task "+strconv.Quote(args.TaskID)+": unknown, expired (tasks are kept for their ttlMs), or started by someone else"))
			return true
		}
		s.logf("mcp: %s %s: %v", name, args.TaskID, err)
		s.reply(req, e, textError("internal error"))
		return true
	}
	if id == jobResult {
		if t.Status == "failed" {
			s.reply(req, e, textError("task "+strconv.Quote(t.ID)+" failed: "+t.StatusMessage))
			return true
		}
		if t.Result == nil {
			s.reply(req, e, textError("task "+strconv.Quote(t.ID)+" is still "+t.Status+"; ask for its status, then for its result once it is completed"))
			return true
		}
		s.reply(req, e, callResult(t.Result))
		return true
	}
	obj := append([]byte{'{'}, appendTask(nil, &t, false)...)
	s.reply(req, e, toolResult(append(obj, '}'), false))
	return true
}

// taskInvocation is the invocation of a call that becomes a task: the same
// as a direct call's, bounded by the launch binding's template but for its
// deadline (the task policy's, set by the host).
func (s *Session) taskInvocation(req *Request, invID string, bc *Resolved, kreq kernel.Request) *kernel.Invocation {
	s.bmu.Lock()
	bound := s.binding
	s.bmu.Unlock()
	tmpl := bound.Template
	return &kernel.Invocation{
		ID:       invID,
		Command:  bc.Command,
		Dir:      bc.Dir,
		Request:  kreq,
		Caller:   s.caller(req, bound),
		Limits:   tmpl.Limits(),
		Stdout:   kernel.NewDiagnostics(tmpl.DiagnosticsBytes),
		Stderr:   kernel.NewDiagnostics(tmpl.DiagnosticsBytes),
		Package:  bc.Release.Name,
		Settings: bc.Settings,
	}
}

// TaskID is the taskId param of tasks/get, tasks/update and tasks/cancel
// when a string.
func (r *Request) TaskID() (string, bool) { return stringParam(r.params.TaskID) }
