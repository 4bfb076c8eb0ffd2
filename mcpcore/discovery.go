package mcpcore

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/policy"
)

// Progressive discovery (docs/discovery.md). An endpoint whose revision
// says "progressive" lists only its direct tools, then three discovery
// tools: search (ranked names from the revision's index), describe (one
// tool object, as direct mode would list it) and call. A call through the
// call tool is the tools/call of the tool it names: the request is handed
// to callTool with that name and those arguments, so its resolution and
// pinning, checks, credential and level, task, outcome, progress and
// errors are tools/call's own. Every other tool the endpoint publishes
// stays callable by tools/call too.

// Search bounds.
const (
	maxQueryBytes  = 1024
	maxSearchLimit = 50
	defSearchLimit = 10
)

type discoveryTool struct{ id, name string }

// discoveryTools are the three tools' names on the endpoint: in its naming
// mode, with no revision, so they stay the same across publishes (and are
// worked out once). None until the launch binding is fixed.
func (s *Session) discoveryTools() []discoveryTool {
	if d := s.discovery.Load(); d != nil {
		return *d
	}
	b := s.boundLaunch()
	if b == nil {
		return nil
	}
	out := make([]discoveryTool, len(policy.DiscoveryToolIDs))
	for i, id := range policy.DiscoveryToolIDs {
		out[i] = discoveryTool{id: id, name: policy.DiscoveryToolName(b.ToolNames, b.Namespace, id)}
	}
	s.discovery.Store(&out)
	return out
}

// discoveryName is the name of discovery tool id on the endpoint.
func (s *Session) discoveryName(id string) string {
	for _, d := range s.discoveryTools() {
		if d.id == id {
			return d.name
		}
	}
	return id
}

// discoveryWire is the tools/list entry of discovery tool id, its
// description naming its siblings as this endpoint serves them.
func (s *Session) discoveryWire(dst []byte, id, name string) []byte {
	search, describe, call := s.discoveryName(policy.DiscoverySearch), s.discoveryName(policy.DiscoveryDescribe), s.discoveryName(policy.DiscoveryCall)
	var body string
	switch id {
	case policy.DiscoverySearch:
		body = `{"title":"Search tools","description":` + quote("This server has more tools than it lists. Search them by what you want to do, in a few words (\"add a note\", \"list open issues\"), before deciding no tool can help. Returns the best-matching tool names, best first; get one's arguments with "+describe+", then run it with "+call+".") +
			`,"inputSchema":{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":1024,"description":"the task, in a few words: a verb and what it acts on"},` +
			`"limit":{"type":"integer","minimum":1,"maximum":50,"default":10,"description":"the most tools to return"}},"required":["query"],"additionalProperties":false},` +
			`"outputSchema":{"type":"object","properties":{"tools":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"}},"required":["name"],"additionalProperties":false}},` +
			`"revision":{"type":"string"}},"required":["tools"],"additionalProperties":false},"annotations":{"readOnlyHint":true}}`
	case policy.DiscoveryDescribe:
		body = `{"title":"Describe a tool","description":` + quote("The full definition of one tool: its inputSchema, the arguments "+call+" takes for it, and its outputSchema. name is a name "+search+" returned.") +
			`,"inputSchema":{"type":"object","properties":{"name":{"type":"string","minLength":1,"description":"a tool name from ` + search + `"}},"required":["name"],"additionalProperties":false},` +
			`"outputSchema":{"type":"object","properties":{"name":{"type":"string"},"inputSchema":{"type":"object"}},"required":["name","inputSchema"]},"annotations":{"readOnlyHint":true}}`
	case policy.DiscoveryCall:
		body = `{"title":"Call a tool","description":` + quote("Run a tool "+search+" found: name is its exact name, arguments an object that follows the inputSchema "+describe+" gave. The answer is the tool's own, as if it had been called directly.") +
			`,"inputSchema":{"type":"object","properties":{"name":{"type":"string","minLength":1,"description":"a tool name from ` + search + `"},` +
			`"arguments":{"type":"object","description":"the tool's arguments, as its inputSchema says"}},"required":["name"],"additionalProperties":false}}`
	}
	return policy.AppendToolWire(dst, name, []byte(body))
}

func quote(s string) string { return string(appendString(nil, s)) }

// progressive reports whether the active revision lists progressively.
func progressive(c Catalog) bool { return c != nil && c.HasEndpoint() && c.Discovery().Progressive() }

// appendDiscoveryTools adds the three tools after the listed ones.
func (s *Session) appendDiscoveryTools(body []byte, first bool) []byte {
	for _, d := range s.discoveryTools() {
		if !first {
			body = append(body, ',')
		}
		first = false
		body = s.discoveryWire(body, d.id, d.name)
	}
	return body
}

// callDiscoveryTool answers a call of a discovery tool; false: name is
// not one on this endpoint now (a direct endpoint has none: the name is
// then unknown like any other).
func (s *Session) callDiscoveryTool(req *Request, e era, name string) bool {
	if s.boundLaunch() == nil {
		_ = s.current(func(uint64, Catalog) error { return nil }) // fixes the binding
	}
	var id string
	for _, d := range s.discoveryTools() {
		if d.name == name {
			id = d.id
		}
	}
	if id == "" {
		return false
	}
	var prog bool
	if rerr := s.current(func(_ uint64, c Catalog) error { prog = progressive(c); return nil }); rerr != nil {
		s.replyError(req, rerr)
		return true
	}
	if !prog {
		return false
	}
	switch id {
	case policy.DiscoverySearch:
		s.searchTools(req, e)
	case policy.DiscoveryDescribe:
		s.describeTool(req, e)
	case policy.DiscoveryCall:
		s.callThrough(req, e)
	}
	return true
}

// discoveryArgs decodes a discovery tool's arguments strictly; false: it
// answered with what was wrong and the shape it wants.
func (s *Session) discoveryArgs(req *Request, e era, v any, want string) bool {
	args := req.params.Arguments
	if len(args) == 0 || args.Kind() != '{' || json.Unmarshal(args, v, json.RejectUnknownMembers(true)) != nil {
		s.reply(req, e, textError("invalid input: want "+want))
		return false
	}
	return true
}

func (s *Session) searchTools(req *Request, e era) {
	var args struct {
		Query string `json:"query"`
		Limit *int   `json:"limit"`
	}
	const want = `{"query": "what you want to do", "limit": 1..50 (default 10)}`
	if !s.discoveryArgs(req, e, &args, want) {
		return
	}
	limit := defSearchLimit
	if args.Limit != nil {
		limit = *args.Limit
	}
	q := strings.TrimSpace(args.Query)
	switch {
	case q == "":
		s.reply(req, e, textError("invalid input: query is empty: say what you want to do, in a few words"))
		return
	case len(args.Query) > maxQueryBytes:
		s.reply(req, e, textError("invalid input: query is over 1024 bytes: say what you want to do in a few words"))
		return
	case limit < 1 || limit > maxSearchLimit:
		s.reply(req, e, textError("invalid input: limit must be 1..50"))
		return
	}
	var hits []SearchHit
	var revision string
	rerr := s.current(func(_ uint64, c Catalog) error {
		if !progressive(c) {
			return nil // a publish made the endpoint direct meanwhile
		}
		var err error
		revision = c.Revision()
		if hits, err = c.Search(q, limit); err != nil {
			s.logf("mcp: search: %v", err)
			return rpcFailure{newError(codeInternalError, "the active revision is inconsistent")}
		}
		return nil
	})
	if rerr != nil {
		s.replyError(req, rerr)
		return
	}
	obj := []byte(`{"tools":[`)
	for i, h := range hits {
		if i > 0 {
			obj = append(obj, ',')
		}
		obj = append(obj, `{"name":`...)
		obj = appendString(obj, h.Name)
		if h.Title != "" {
			obj = append(obj, `,"title":`...)
			obj = appendString(obj, h.Title)
		}
		if h.Description != "" {
			obj = append(obj, `,"description":`...)
			obj = appendString(obj, h.Description)
		}
		obj = append(obj, '}')
	}
	obj = append(obj, ']')
	if revision != "" {
		obj = append(obj, `,"revision":`...)
		obj = appendString(obj, revision)
	}
	obj = append(obj, '}')
	s.reply(req, e, textResult(s.searchText(q, hits), obj))
}

// searchText is the search result as an agent reads it: one tool a line,
// best first, and what to do next; or, when nothing matched, how to
// search again.
func (s *Session) searchText(q string, hits []SearchHit) string {
	describe, call := s.discoveryName(policy.DiscoveryDescribe), s.discoveryName(policy.DiscoveryCall)
	if len(hits) == 0 {
		return "No tool matches " + strconv.Quote(q) + ". Search again with fewer or more general words: a verb and what it acts on (\"create issue\", \"send message\")."
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(hits)))
	b.WriteString(" tool(s) for ")
	b.WriteString(strconv.Quote(q))
	b.WriteString(", best first. Get one's arguments with ")
	b.WriteString(describe)
	b.WriteString(", then run it with ")
	b.WriteString(call)
	b.WriteString(":")
	for _, h := range hits {
		b.WriteString("\n- ")
		b.WriteString(h.Name)
		if h.Title != "" {
			b.WriteString(": ")
			b.WriteString(h.Title)
		}
		if h.Description != "" && h.Description != h.Title {
			b.WriteString(" — ")
			b.WriteString(h.Description)
		}
	}
	return b.String()
}

// named refuses an empty name as input, not as an unknown tool.
func (s *Session) named(req *Request, e era, name, want string) bool {
	if name == "" {
		s.reply(req, e, textError("invalid input: name is missing: want "+want))
		return false
	}
	return true
}

// textResult is a successful tool result: obj as structuredContent, text
// as its one text block.
func textResult(text string, obj []byte) result {
	body := append([]byte(`"content":[{"type":"text","text":`), appendString(nil, text)...)
	body = append(body, `}],"structuredContent":`...)
	body = append(body, obj...)
	return result{body: append(body, `,"isError":false`...)}
}

// describeTool answers the tool object of a name: the endpoint's own and
// built-in tools alike; an unknown, stale or invisible name gets
// tools/call's answer.
func (s *Session) describeTool(req *Request, e era) {
	var args struct {
		Name string `json:"name"`
	}
	const want = `{"name": "a tool name the search returned"}`
	if !s.discoveryArgs(req, e, &args, want) || !s.named(req, e, args.Name, want) {
		return
	}
	var obj []byte
	for _, d := range s.discoveryTools() {
		if d.name == args.Name {
			obj = s.discoveryWire(nil, d.id, d.name)
		}
	}
	for _, j := range s.jobTools() {
		if j.name == args.Name {
			obj = policy.AppendToolWire(nil, j.name, []byte(j.body))
		}
	}
	if obj == nil {
		rerr := s.current(func(_ uint64, c Catalog) error {
			if c == nil || !c.HasEndpoint() {
				return nil
			}
			o, ok, err := c.Tool(args.Name)
			if err != nil {
				s.logf("mcp: %v", err)
				return rpcFailure{newError(codeInternalError, "the active revision is inconsistent")}
			}
			if ok {
				obj = o
			}
			return nil
		})
		if rerr != nil {
			s.replyError(req, rerr)
			return
		}
	}
	if obj == nil {
		s.replyError(req, s.unknownTool(args.Name, true))
		return
	}
	s.reply(req, e, toolResult(obj, false))
}

// callThrough is the call tool: the request becomes the tools/call of
// the tool it names, with its arguments and everything else it carries
// (its id, _meta, progress token, credential). It is changed in place,
// not copied: a transport knows its requests by pointer (the HTTP layer
// claims a one-time token for one and releases it for the same one).
func (s *Session) callThrough(req *Request, e era) {
	var args struct {
		Name      string         `json:"name"`
		Arguments jsontext.Value `json:"arguments"`
	}
	const want = `{"name": "a tool name the search returned", "arguments": {…}}`
	if !s.discoveryArgs(req, e, &args, want) || !s.named(req, e, args.Name, want) || !s.checkThrough(req, e, args.Name) {
		return
	}
	req.params.Name = appendString(nil, args.Name)
	req.params.Arguments = args.Arguments // checked by the tool's input check, as tools/call's are
	s.callTool(req, e)
}

// checkThrough refuses what the call tool does not pass on: a call of
// itself or its siblings.
func (s *Session) checkThrough(req *Request, e era, name string) bool {
	for _, d := range s.discoveryTools() {
		if d.name == name {
			s.reply(req, e, textError("invalid input: "+strconv.Quote(name)+" is a discovery tool: call it directly"))
			return false
		}
	}
	return true
}
