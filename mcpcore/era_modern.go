package mcpcore

// The 2026-07-28 era: no handshake; every request carries its protocol
// version and client capabilities in params._meta and stands alone.

import "strconv"

// ModernVersion is the one stateless protocol version served.
const ModernVersion = "2026-07-28"

// Reserved _meta keys of the modern era.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// removedMethods existed before 2026-07-28; on a modern request they get
// -32601 like any unknown method, with a message that says why.
var removedMethods = map[string]bool{
	"initialize":                         true,
	"notifications/initialized":          true,
	"ping":                               true,
	"logging/setLevel":                   true,
	"resources/subscribe":                true,
	"resources/unsubscribe":              true,
	"notifications/roots/list_changed":   true,
	"notifications/elicitation/complete": true,
}

// Methods a modern request routes by a name in its params (RoutedName).
const (
	methodToolsCall   = "tools/call"
	methodTasksGet    = "tasks/get"
	methodTasksUpdate = "tasks/update"
	methodTasksCancel = "tasks/cancel"
)

// RoutedName is the name a modern request is routed by: the tool of a
// tools/call, the task of a tasks extension method (params.taskId); routed
// is false for every other method. A transport that repeats the name in its
// own framing (HTTP's Mcp-Name) has it checked for these methods only.
func (r *Request) RoutedName() (name string, routed bool) {
	switch r.method {
	case methodToolsCall:
		name, _ = stringParam(r.params.Name)
	case methodTasksGet, methodTasksUpdate, methodTasksCancel:
		name, _ = stringParam(r.params.TaskID)
	default:
		return "", false
	}
	return name, true
}

// Headers is what a transport's own framing repeats of a modern request
// (HTTP: the Mcp-Method, MCP-Protocol-Version and Mcp-Name headers), as it
// read it; the core checks it against the body.
type Headers struct {
	Method, Version, Name HeaderValue
}

// HeaderValue is one header as a transport read it.
type HeaderValue struct {
	Value string
	Sent  bool // present exactly once
	Bad   bool // sent, but its encoding could not be decoded
}

// handleModern checks the request's _meta (-32602), the transport's headers
// against it (-32020, when hdr is not nil), its version (-32022) and its
// method (-32601), in that order, then dispatches.
func (s *Session) handleModern(req *Request, hdr *Headers) {
	if rerr := checkModernMeta(req, hdr); rerr != nil {
		s.replyError(req, rerr)
		return
	}
	switch req.method {
	case "server/discover":
		s.reply(req, eraModern, s.discoverResult())
	case "tools/list":
		r, rerr := s.listTools(req.params.Cursor)
		if rerr != nil {
			s.replyError(req, rerr)
			return
		}
		s.reply(req, eraModern, r)
	case methodToolsCall:
		s.callTool(req, eraModern)
	case "subscriptions/listen":
		s.listen(req)
	case methodTasksGet, methodTasksUpdate, methodTasksCancel:
		s.handleTaskMethod(req)
	default:
		msg := "method not found: " + req.method
		if removedMethods[req.method] {
			msg = "method " + req.method + " was removed in protocol version " + ModernVersion
		}
		s.replyError(req, newError(codeMethodNotFound, msg))
	}
}

func checkModernMeta(req *Request, hdr *Headers) *rpcError {
	if rerr := checkModernRequired(req); rerr != nil {
		return rerr
	}
	if hdr != nil {
		if msg := headerMismatch(req, hdr); msg != "" {
			return newError(CodeHeaderMismatch, msg)
		}
	}
	version, _ := req.MetaVersion()
	if version != ModernVersion {
		data := []byte(`{"supported":["` + ModernVersion + `"],"requested":`)
		data = appendString(data, version)
		data = append(data, '}')
		return &rpcError{code: codeUnsupportedVersion, message: "unsupported protocol version", data: data}
	}
	return nil
}

// checkModernRequired checks the required _meta keys and their types.
func checkModernRequired(req *Request) *rpcError {
	if req.metaErr {
		return newError(codeInvalidParams, "invalid params: _meta must be an object")
	}
	v, ok := req.meta[metaProtocolVersion]
	if !ok {
		return newError(codeInvalidParams, "invalid params: missing _meta key "+metaProtocolVersion)
	}
	if _, ok := stringParam(v); !ok {
		return newError(codeInvalidParams, "invalid params: _meta key "+metaProtocolVersion+" must be a string")
	}
	caps, ok := req.meta[metaClientCapabilities]
	if !ok {
		return newError(codeInvalidParams, "invalid params: missing _meta key "+metaClientCapabilities)
	}
	if caps.Kind() != '{' {
		return newError(codeInvalidParams, "invalid params: _meta key "+metaClientCapabilities+" must be an object")
	}
	return nil
}

// headerMismatch checks the headers against the body in the order the
// HTTP transport specifies: method, version, then the routed name; "" when
// they match.
func headerMismatch(req *Request, hdr *Headers) string {
	if !hdr.Method.Sent {
		return "Header mismatch: the Mcp-Method header is missing"
	}
	if hdr.Method.Value != req.method {
		return "Header mismatch: Mcp-Method header value " + strconv.Quote(hdr.Method.Value) + " does not match body value " + strconv.Quote(req.method)
	}
	version, _ := req.MetaVersion()
	if !hdr.Version.Sent {
		return "Header mismatch: the MCP-Protocol-Version header is missing"
	}
	if hdr.Version.Value != version {
		return "Header mismatch: MCP-Protocol-Version header value " + strconv.Quote(hdr.Version.Value) + " does not match body value " + strconv.Quote(version)
	}
	name, routed := req.RoutedName()
	if !routed {
		return ""
	}
	switch {
	case !hdr.Name.Sent:
		return "Header mismatch: the Mcp-Name header is missing"
	case hdr.Name.Bad:
		return "Header mismatch: the Mcp-Name header value is not valid"
	case hdr.Name.Value != name:
		return "Header mismatch: Mcp-Name header value " + strconv.Quote(hdr.Name.Value) + " does not match body value " + strconv.Quote(name)
	}
	return ""
}

// discoverResult is the server/discover body: tools only, with listChanged
// when subscriptions/listen streams deliver it.
func (s *Session) discoverResult() result {
	return result{
		body:      []byte(`"supportedVersions":["` + ModernVersion + `"],"capabilities":` + s.capabilities()),
		cacheable: true,
	}
}

// capabilities is the server capabilities object of the modern era.
func (s *Session) capabilities() string {
	c := s.capabilitiesOf(s.subs.supported())
	if s.tasksAdvertised() {
		c = c[:len(c)-1] + `,"extensions":{"` + TasksExtension + `":{}}}`
	}
	return c
}

// capabilitiesOf is the capabilities object of either era; listChanged
// only where its notification can be delivered.
func (s *Session) capabilitiesOf(listChanged bool) string {
	if listChanged {
		return `{"tools":{"listChanged":true}}`
	}
	return `{"tools":{}}`
}

// appendModernTail appends, after r's members, what every modern result
// carries: caching fields on discover and list, resultType, and serverInfo
// in _meta.
func (s *Session) appendModernTail(b []byte, r result) []byte {
	if r.cacheable {
		b = append(b, `,"ttlMs":0,"cacheScope":"private"`...) // discover and list bodies are never empty
	}
	if len(r.body) > 0 {
		b = append(b, ',')
	}
	rt := r.resultType
	if rt == "" {
		rt = "complete"
	}
	b = append(b, `"resultType":"`+rt+`","_meta":{"`+metaServerInfo+`":`...)
	b = append(b, s.info...)
	return append(b, "}"...)
}
