package mcpclients

import (
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
)

func TestConfigPath(t *testing.T) {
	home := map[string]string{"HOME": "/home/ann"}
	xdg := map[string]string{"HOME": "/home/ann", "XDG_CONFIG_HOME": "/cfg"}
	mac := map[string]string{"HOME": "/Users/ann", "XDG_CONFIG_HOME": "/cfg"}
	macApp := "/Users/ann/Library/Application Support/"
	tests := []struct {
		client, goos string
		env          map[string]string
		want         string
		code         kernel.Code
	}{
		{"claude", "darwin", mac, macApp + "Claude/claude_desktop_config.json", ""},
		{"claude", "linux", home, "/home/ann/.config/Claude/claude_desktop_config.json", ""},
		{"claude", "linux", xdg, "/cfg/Claude/claude_desktop_config.json", ""},
		{"claude", "freebsd", home, "/home/ann/.config/Claude/claude_desktop_config.json", ""},
		{"vscode", "darwin", mac, macApp + "Code/User/mcp.json", ""},
		{"vscode", "linux", home, "/home/ann/.config/Code/User/mcp.json", ""},
		{"vscode", "linux", xdg, "/cfg/Code/User/mcp.json", ""},
		{"vscode", "freebsd", home, "/home/ann/.config/Code/User/mcp.json", ""},
		{"vscode", "linux", map[string]string{"HOME": "/home/ann", "XDG_CONFIG_HOME": "rel"}, "/home/ann/.config/Code/User/mcp.json", ""},
		{"cursor", "darwin", mac, "/Users/ann/.cursor/mcp.json", ""},
		{"cursor", "linux", xdg, "/home/ann/.cursor/mcp.json", ""},
		{"cursor", "freebsd", home, "/home/ann/.cursor/mcp.json", ""},
		{"claude-code", "darwin", mac, "/Users/ann/.claude.json", ""},
		{"claude-code", "linux", xdg, "/home/ann/.claude.json", ""},
		{"claude", "linux", map[string]string{}, "", kernel.CodeInvalid},
		{"claude", "linux", map[string]string{"HOME": "rel"}, "", kernel.CodeInvalid},
		{"vscode", "windows", home, "", kernel.CodeUnsupported},
		{"emacs", "linux", home, "", kernel.CodeUsage},
	}
	for _, tt := range tests {
		t.Run(tt.client+"/"+tt.goos, func(t *testing.T) {
			got, err := ConfigPath(tt.client, tt.goos, func(k string) string { return tt.env[k] })
			if tt.code != "" {
				if kernel.ErrorCode(err) != tt.code {
					t.Fatalf("ConfigPath = %q, %v; want code %s", got, err, tt.code)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ConfigPath = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	claude := func() *Entry {
		return &Entry{Client: "claude", Section: "mcpServers", Key: "rukh-local",
			Server: map[string]any{"command": "/bin/rukh", "args": []string{"serve-mcp"}}}
	}
	vscode := func() *Entry {
		return &Entry{Client: "vscode", Section: "servers", Key: "rukh-web",
			Server: map[string]any{"type": "http", "url": "http://h/x"},
			Inputs: []map[string]any{{"id": "rukh-web-token", "type": "promptString", "password": true}}}
	}
	tests := []struct {
		name   string
		entry  *Entry
		old    string
		want   string // the whole new file
		action string
		err    string
	}{
		{"fresh", claude(), "", `{
  "mcpServers": {
    "rukh-local": {
      "args": [
        "serve-mcp"
      ],
      "command": "/bin/rukh"
    }
  }
}
`, "created", ""},
		{"whitespace only is empty", claude(), " \n", "", "added", ""},
		{"other members and servers kept, in order, their text exact", claude(),
			`{"theme":"dark","n":1.50e3,"s":"caf\u00e9 \"q\"","mcpServers":{"other":{"command":"x","env":{"TOKEN":"t0k"}}},"z":[true,null]}`,
			`{
  "theme": "dark",
  "n": 1.50e3,
  "s": "caf\u00e9 \"q\"",
  "mcpServers": {
    "other": {
      "command": "x",
      "env": {
        "TOKEN": "t0k"
      }
    },
    "rukh-local": {
      "args": [
        "serve-mcp"
      ],
      "command": "/bin/rukh"
    }
  },
  "z": [
    true,
    null
  ]
}
`, "added", ""},
		{"same key replaced in place", claude(),
			`{"mcpServers":{"a":{},"rukh-local":{"command":"/old/rukh"},"b":{}}}`,
			`{
  "mcpServers": {
    "a": {},
    "rukh-local": {
      "args": [
        "serve-mcp"
      ],
      "command": "/bin/rukh"
    },
    "b": {}
  }
}
`, "replaced", ""},
		{"the same entry is left alone", claude(),
			`{"mcpServers":{"rukh-local":{"command":"/bin/rukh","args":["serve-mcp"]}}}`, "", "unchanged", ""},
		{"vscode inputs merged by id", vscode(),
			`{"inputs":[{"id":"other","type":"promptString"},{"id":"rukh-web-token","type":"old"}],"servers":{}}`,
			`{
  "inputs": [
    {
      "id": "other",
      "type": "promptString"
    },
    {
      "id": "rukh-web-token",
      "password": true,
      "type": "promptString"
    }
  ],
  "servers": {
    "rukh-web": {
      "type": "http",
      "url": "http://h/x"
    }
  }
}
`, "added", ""},
		{"not JSON", claude(), `{"mcpServers": {`, "", "", "not valid JSON"},
		{"trailing comma", claude(), `{"a": 1,}`, "", "", "not valid JSON"},
		{"comments", vscode(), "{\n  // mine\n  \"servers\": {}\n}", "", "", "it has comments"},
		{"top level array", claude(), `[]`, "", "", "not a JSON object"},
		{"two values", claude(), `{} {}`, "", "", "not valid JSON"},
		{"duplicate names", claude(), `{"a":1,"a":2}`, "", "", "not valid JSON"},
		{"servers not an object", claude(), `{"mcpServers":[]}`, "", "", `"mcpServers" is not an object of servers`},
		{"inputs not an array", vscode(), `{"inputs":{}}`, "", "", `"inputs" is not an array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old []byte // no file
			if tt.name != "fresh" {
				old = []byte(tt.old)
			}
			out, action, err := merge(old, tt.entry)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("merge error = %v; want %q", err, tt.err)
				}
				return
			}
			if err != nil || action != tt.action {
				t.Fatalf("merge = %q, %v; want %q", action, err, tt.action)
			}
			if tt.want != "" && string(out) != tt.want {
				t.Fatalf("merge wrote\n%s\nwant\n%s", out, tt.want)
			}
			if action == "unchanged" && string(out) != tt.old {
				t.Fatalf("an unchanged file was rewritten: %s", out)
			}
		})
	}
}

func TestHasJSONComments(t *testing.T) {
	for in, want := range map[string]bool{
		`{"url": "http://x//y", "a": "/*"}`: false,
		`{"a": "\"//"}`:                     false,
		"{} // end":                         true,
		"{/* c */}":                         true,
		`{"a": "\\"} // c`:                  true,
	} {
		if got := hasJSONComments([]byte(in)); got != want {
			t.Errorf("hasJSONComments(%s) = %v, want %v", in, got, want)
		}
	}
}
