package mcpcore

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// decodeLineByUnmarshal is decodeLine as it was, one json.Unmarshal per
// level (envelope, params, _meta): the walk must decide every line alike.
func decodeLineByUnmarshal(line []byte) (*Request, jsontext.Value, *rpcError) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil, nil, nil
	}
	if err := kernel.CheckJSON(trimmed, kernel.JSONLimits{MaxDepth: maxDepth, MaxMembers: maxMembers}); err != nil {
		return nil, nil, newError(codeParseError, "parse error: "+err.Error())
	}
	switch trimmed[0] {
	case '{':
	case '[':
		return nil, nil, newError(codeInvalidRequest, "invalid request: batches are not supported")
	default:
		return nil, nil, newError(codeInvalidRequest, "invalid request: a message must be a JSON object")
	}
	var env struct {
		JSONRPC jsontext.Value `json:"jsonrpc"`
		ID      jsontext.Value `json:"id"`
		Method  jsontext.Value `json:"method"`
		Params  jsontext.Value `json:"params"`
		Result  jsontext.Value `json:"result"`
		Error   jsontext.Value `json:"error"`
	}
	if err := json.Unmarshal(trimmed, &env); err != nil {
		return nil, nil, newError(codeInvalidRequest, "invalid request: "+err.Error())
	}
	if env.Method == nil && (env.Result != nil || env.Error != nil) {
		return nil, nil, nil
	}
	var id jsontext.Value
	if env.ID != nil {
		if !validID(env.ID) {
			return nil, nil, newError(codeInvalidRequest, "invalid request: id must be a string or an integer")
		}
		id = env.ID
	}
	var jsonrpc string
	if env.JSONRPC.Kind() != '"' || json.Unmarshal(env.JSONRPC, &jsonrpc) != nil || jsonrpc != "2.0" {
		return nil, id, newError(codeInvalidRequest, `invalid request: jsonrpc must be "2.0"`)
	}
	if env.Method == nil {
		return nil, id, newError(codeInvalidRequest, "invalid request: missing method")
	}
	var method string
	if env.Method.Kind() != '"' || json.Unmarshal(env.Method, &method) != nil {
		return nil, id, newError(codeInvalidRequest, "invalid request: method must be a string")
	}
	req := &Request{id: id, method: method}
	if env.Params != nil {
		if env.Params.Kind() != '{' {
			if id == nil {
				return nil, nil, nil
			}
			return nil, id, newError(codeInvalidParams, "invalid params: params must be an object")
		}
		var p struct {
			Meta            jsontext.Value `json:"_meta"`
			Cursor          jsontext.Value `json:"cursor"`
			Name            jsontext.Value `json:"name"`
			Arguments       jsontext.Value `json:"arguments"`
			ProtocolVersion jsontext.Value `json:"protocolVersion"`
			RequestID       jsontext.Value `json:"requestId"`
			TaskID          jsontext.Value `json:"taskId"`
			Notifications   jsontext.Value `json:"notifications"`
			InputResponses  jsontext.Value `json:"inputResponses"`
			RequestState    jsontext.Value `json:"requestState"`
		}
		if err := json.Unmarshal(env.Params, &p); err != nil {
			if id == nil {
				return nil, nil, nil
			}
			return nil, id, newError(codeInvalidParams, "invalid params: "+err.Error())
		}
		req.params = params(p)
		if m := req.params.Meta; m != nil {
			if m.Kind() != '{' || json.Unmarshal(m, &req.meta) != nil {
				req.metaErr = true
				req.meta = nil
			}
		}
	}
	return req, nil, nil
}

var decodeCases = []string{
	``, `   `, `[]`, `[{"jsonrpc":"2.0"}]`, `"x"`, `12`, `null`, `{`, `{"a":1,"a":2}`, "{\"m\":\"\xff\"}",
	`{}`, `{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":-7,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"a\"b","method":"ping"}`, `{"jsonrpc":"2.0","id":true,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":1}}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`, `{"jsonrpc":"2.0","id":1,"method":null,"result":1}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"jsonrpc":"\u0032.0","id":1,"method":"ping"}`,
	`{"jsonrpc":2,"id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"method":7}`,
	`{"jsonrpc":"2.0","id":1,"method":"to\u006fls/list"}`, `{"\u006aso\u006erpc":"2.0","\u0069d":3,"method":"ping"}`,
	`{"JSONRPC":"2.0","Id":3,"Method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/x","params":7}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":7}`, `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}`,
	` { "jsonrpc" : "2.0" , "id" : 1 , "method" : "tools/call" , "params" : { "name" : "x" , "arguments" : { "a" : [ 1 , 2 ] } , "_meta" : { "k" : { } } } } `,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":7}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"a\u00e9\"":1,"progressToken":"t"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_met\u0061":{"x":null},"NAME":"y","cursor":"c","protocolVersion":"p","requestId":1,"taskId":"t","notifications":[],"inputResponses":{},"requestState":"s"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"extra":{"nested":[{"deep":true}]}}`,
	`{"method":"ping","jsonrpc":"2.0","id":"z"}`,
}

// TestDecodeLineAsUnmarshal: the one walk over a line decides every line
// as the decode per level did, the transcripts' requests included.
func TestDecodeLineAsUnmarshal(t *testing.T) {
	lines := append([]string(nil), decodeCases...)
	files, _ := filepath.Glob("testdata/transcripts/*.txtar")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for l := range bytes.Lines(data) {
			if bytes.HasPrefix(l, []byte(`{"jsonrpc"`)) {
				lines = append(lines, string(l))
			}
		}
	}
	if len(lines) < len(decodeCases)+100 {
		t.Fatalf("only %d lines to compare", len(lines))
	}
	for _, line := range lines {
		compareDecode(t, []byte(line))
	}
}

func compareDecode(t *testing.T, line []byte) {
	t.Helper()
	req, id, rerr := decodeLine(line)
	wreq, wid, wrerr := decodeLineByUnmarshal(line)
	if !bytes.Equal(id, wid) || !reflect.DeepEqual(rerr, wrerr) {
		t.Fatalf("%s: id %s, error %+v; want id %s, error %+v", line, id, rerr, wid, wrerr)
	}
	if (req == nil) != (wreq == nil) {
		t.Fatalf("%s: request %+v, want %+v", line, req, wreq)
	}
	if req == nil {
		return
	}
	if !bytes.Equal(req.id, wreq.id) || req.method != wreq.method || req.metaErr != wreq.metaErr ||
		!reflect.DeepEqual(req.params, wreq.params) || len(req.meta) != len(wreq.meta) {
		t.Fatalf("%s:\n got %+v\nwant %+v", line, req, wreq)
	}
	for k, v := range wreq.meta {
		if !bytes.Equal(req.meta[k], v) {
			t.Fatalf("%s: _meta[%q] = %s, want %s", line, k, req.meta[k], v)
		}
	}
}

func FuzzDecodeLine(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) { compareDecode(t, line) })
}

// BenchmarkDecodeCall: one tools/call line as the bench sends it.
func BenchmarkDecodeCall(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"trivial_ping__811d177087b70a32f9162d86c742c549307d89fdb288c196daae1590d887e764","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	b.Run("walk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decodeLine(line)
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decodeLineByUnmarshal(line)
		}
	})
}
