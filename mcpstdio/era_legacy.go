package mcpstdio

// The legacy era (2025-11-25 and 2025-06-18): an initialize handshake, then
// requests without per-request _meta. This file is only a mapping: which
// requests take the legacy path and how their results are decorated. Tool
// listing and calling are the same handlers as the modern era, so a legacy
// call can never mean or do anything a modern one would not.

// Legacy protocol versions served after initialize, newest first.
const (
	LegacyVersion         = "2025-11-25"
	LegacyVersionPrevious = "2025-06-18"
)

// isLegacy classifies a request. A request carrying the modern
// protocolVersion _meta key is always modern. Without it, the handshake
// methods are legacy, and after a legacy initialize so is every request but
// server/discover (the modern era probe). Anything else is treated as a
// modern request that lacks its _meta, so it gets -32602 rather than a
// silent legacy answer to a client that never shook hands.
func (s *server) isLegacy(req *request) bool {
	if _, modern := req.meta[metaProtocolVersion]; modern {
		return false
	}
	switch req.method {
	case "initialize", "ping":
		return true
	case "server/discover":
		return false
	}
	return s.legacyInitialized
}

func (s *server) handleLegacy(req *request) {
	switch req.method {
	case "initialize":
		r, rerr := s.initialize(req)
		if rerr != nil {
			s.replyError(req.id, rerr)
			return
		}
		s.reply(req.id, eraLegacy, r)
		// After the response: the client knows listChanged before any hint.
		s.subs.listenLegacy()
	case "ping":
		s.reply(req.id, eraLegacy, result{})
	case "tools/list":
		r, rerr := s.listTools(req.params.Cursor)
		if rerr != nil {
			s.replyError(req.id, rerr)
			return
		}
		s.reply(req.id, eraLegacy, r)
	case "tools/call":
		s.callTool(req, eraLegacy)
	default:
		s.replyError(req.id, newError(codeMethodNotFound, "method not found: "+req.method))
	}
}

// initialize answers the legacy handshake. A requested version the server
// does not speak is answered with the newest legacy version, as the legacy
// negotiation rule says; the client then decides whether to continue.
// clientInfo and capabilities are ignored: they carry no identity here.
func (s *server) initialize(req *request) (result, *rpcError) {
	requested, ok := stringParam(req.params.ProtocolVersion)
	if !ok {
		return result{}, newError(codeInvalidParams, "invalid params: protocolVersion must be a string")
	}
	version := LegacyVersion
	if requested == LegacyVersionPrevious {
		version = requested
	}
	s.legacyInitialized = true
	b := []byte(`"protocolVersion":"` + version + `","capabilities":` + s.capabilities() + `,"serverInfo":`)
	b = append(b, s.info...)
	return result{body: b}, nil
}

// finishLegacy leaves a body as it is: legacy results carry no resultType,
// no caching fields and no serverInfo _meta.
func finishLegacy(r result) []byte { return r.body }
