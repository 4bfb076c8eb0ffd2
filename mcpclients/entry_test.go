package mcpclients

import (
	"testing"
)

func TestEntries(t *testing.T) {
	auth := &Auth{TokenEnv: "TOK", Prompt: "the token"}
	tests := []struct {
		name  string
		entry *Entry
		want  string // the snippet, as written
	}{
		{"claude stdio", StdioEntry(ClaudeDesktop, "k", "/bin/rukh", []string{"serve-mcp"}, map[string]string{"RUKH_HOME": "/h"}),
			`{"mcpServers":{"k":{"args":["serve-mcp"],"command":"/bin/rukh","env":{"RUKH_HOME":"/h"}}}}`},
		{"claude-code stdio", StdioEntry(ClaudeCode, "k", "/bin/rukh", nil, nil),
			`{"mcpServers":{"k":{"args":[],"command":"/bin/rukh","env":{},"type":"stdio"}}}`},
		{"vscode stdio", StdioEntry(VSCode, "k", "/bin/rukh", []string{}, map[string]string{}),
			`{"servers":{"k":{"args":[],"command":"/bin/rukh","env":{},"type":"stdio"}}}`},
		{"claude http", HTTPEntry(ClaudeDesktop, "k", "http://h/p", auth),
			`{"mcpServers":{"k":{"headers":{"Authorization":"Bearer ${TOK}"},"type":"http","url":"http://h/p"}}}`},
		{"claude http anonymous", HTTPEntry(ClaudeCode, "k", "http://h/p", nil),
			`{"mcpServers":{"k":{"type":"http","url":"http://h/p"}}}`},
		{"cursor http", HTTPEntry(Cursor, "k", "http://h/p", auth),
			`{"mcpServers":{"k":{"headers":{"Authorization":"Bearer ${env:TOK}"},"url":"http://h/p"}}}`},
		{"vscode http", HTTPEntry(VSCode, "k", "http://h/p", auth),
			`{"inputs":[{"description":"the token","id":"k-token","password":true,"type":"promptString"}],"servers":{"k":{"headers":{"Authorization":"Bearer ${input:k-token}"},"type":"http","url":"http://h/p"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := marshal(tt.entry.Snippet())
			if err != nil || string(b) != tt.want {
				t.Fatalf("snippet = %s, %v\nwant %s", b, err, tt.want)
			}
		})
	}
}

func TestClaudeAddLine(t *testing.T) {
	line, err := ClaudeAddLine(StdioEntry(ClaudeCode, "rukh-local", "/it's/rukh", []string{"serve-mcp"}, nil))
	want := `claude mcp add-json --scope user rukh-local '{"args":["serve-mcp"],"command":"/it'\''s/rukh","env":{},"type":"stdio"}'`
	if err != nil || line != want {
		t.Fatalf("ClaudeAddLine = %s, %v\nwant %s", line, err, want)
	}
}
