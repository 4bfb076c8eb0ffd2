package mcpcore

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

// legacyVersions are the versions a legacy client may name, newest first:
// the two served, and 2025-03-26, the version an HTTP client speaks that
// sends no MCP-Protocol-Version header. initialize negotiates only the
// served two (any other request is answered with LegacyVersion); a
// transport that reads a version outside the body (HTTP's header) serves
// a request naming any of them on the legacy era.
var legacyVersions = [...]string{LegacyVersion, LegacyVersionPrevious, "2025-03-26"}

// IsLegacyVersion reports whether v is one of the legacy versions a client
// may name.
func IsLegacyVersion(v string) bool {
	for _, l := range legacyVersions {
		if v == l {
			return true
		}
	}
	return false
}

// isLegacy classifies a request. A request carrying the modern
// protocolVersion _meta key is always modern. Without it, the handshake
// methods are legacy, and after a legacy initialize so is every request but
// server/discover (the modern era probe). Anything else is treated as a
// modern request that lacks its _meta, so it gets -32602 rather than a
// silent legacy answer to a client that never shook hands.
func (s *Session) isLegacy(req *Request) bool {
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

func (s *Session) handleLegacy(req *Request) {
	switch req.method {
	case "initialize":
		r, rerr := s.initialize(req)
		if rerr != nil {
			s.replyError(req, rerr)
			return
		}
		s.reply(req, eraLegacy, r)
		// After the response: the client knows listChanged before any hint.
		s.subs.listenLegacy()
	case "ping":
		s.reply(req, eraLegacy, result{})
	case "tools/list":
		r, rerr := s.listTools(req.params.Cursor)
		if rerr != nil {
			s.replyError(req, rerr)
			return
		}
		s.reply(req, eraLegacy, r)
	case "tools/call":
		s.callTool(req, eraLegacy)
	default:
		s.replyError(req, newError(codeMethodNotFound, "method not found: "+req.method))
	}
}

// initialize answers the legacy handshake. A requested version the server
// does not speak is answered with the newest legacy version, as the legacy
// negotiation rule says; the client then decides whether to continue.
// clientInfo and capabilities are ignored: they carry no identity here.
func (s *Session) initialize(req *Request) (result, *rpcError) {
	requested, ok := stringParam(req.params.ProtocolVersion)
	if !ok {
		return result{}, newError(codeInvalidParams, "invalid params: protocolVersion must be a string")
	}
	version := LegacyVersion
	if requested == LegacyVersionPrevious {
		version = requested
	}
	if !s.scfg.PerRequest {
		s.legacyInitialized = true // HTTP classifies each request itself
	}
	b := []byte(`"protocolVersion":"` + version + `","capabilities":` + s.capabilitiesOf(s.subs.supportedLegacy()) + `,"serverInfo":`)
	b = append(b, s.info...)
	return result{body: b}, nil
}

// appendLegacy appends r's members as they are: legacy results carry no
// resultType, no caching fields and no serverInfo _meta.
func appendLegacy(b []byte, r result) []byte { return append(b, r.body...) }
