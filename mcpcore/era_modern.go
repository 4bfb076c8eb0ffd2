package mcpcore

// The 2026-07-28 era: no handshake; every request carries its protocol
// version and client capabilities in params._meta and stands alone.

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

// handleModern checks the request's _meta (-32602), its version (-32022)
// and its method (-32601), in that order, then dispatches.
func (s *Session) handleModern(req *Request) {
	if rerr := checkModernMeta(req); rerr != nil {
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
	case "tools/call":
		s.callTool(req, eraModern)
	case "subscriptions/listen":
		s.listen(req)
	case "tasks/get", "tasks/update", "tasks/cancel":
		s.handleTaskMethod(req)
	default:
		msg := "method not found: " + req.method
		if removedMethods[req.method] {
			msg = "method " + req.method + " was removed in protocol version " + ModernVersion
		}
		s.replyError(req, newError(codeMethodNotFound, msg))
	}
}

func checkModernMeta(req *Request) *rpcError {
	if rerr := checkModernRequired(req); rerr != nil {
		return rerr
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

// appendModern appends r's members and what every modern result carries:
// caching fields on discover and list, resultType, and serverInfo in _meta.
func (s *Session) appendModern(b []byte, r result) []byte {
	b = append(b, r.body...)
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
