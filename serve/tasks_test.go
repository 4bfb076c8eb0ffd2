package serve

import (
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/store"
)

// A task is seen only by the endpoint, agent and identity provider that
// started it: an identity provider's agent and a Rukh agent of the same
// name never see each other's tasks.
func TestTaskVisibility(t *testing.T) {
	st := store.New(t.TempDir())
	h := &taskHost{st: st}
	const idp = "https://idp.example.com/realms/acme"
	for _, tc := range []struct {
		name    string
		started mcpcore.TaskCaller
		who     mcpcore.TaskCaller
		visible bool
	}{
		{"the Rukh agent itself", mcpcore.TaskCaller{Endpoint: "e", Agent: "a"}, mcpcore.TaskCaller{Endpoint: "e", Agent: "a"}, true},
		{"the oauth agent itself", mcpcore.TaskCaller{Endpoint: "e", Agent: "a", Issuer: idp}, mcpcore.TaskCaller{Endpoint: "e", Agent: "a", Issuer: idp}, true},
		{"a Rukh agent of the oauth agent's name", mcpcore.TaskCaller{Endpoint: "e", Agent: "a", Issuer: idp}, mcpcore.TaskCaller{Endpoint: "e", Agent: "a"}, false},
		{"an oauth agent of the Rukh agent's name", mcpcore.TaskCaller{Endpoint: "e", Agent: "a"}, mcpcore.TaskCaller{Endpoint: "e", Agent: "a", Issuer: idp}, false},
		{"another provider's agent of the name", mcpcore.TaskCaller{Endpoint: "e", Agent: "a", Issuer: idp}, mcpcore.TaskCaller{Endpoint: "e", Agent: "a", Issuer: "https://other.example"}, false},
		{"another endpoint", mcpcore.TaskCaller{Endpoint: "e", Agent: "a"}, mcpcore.TaskCaller{Endpoint: "f", Agent: "a"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := store.Task{ID: store.NewTaskID(), Endpoint: tc.started.Endpoint, Agent: tc.started.Agent, Issuer: tc.started.Issuer, Command: "x.y", Tool: "y"}
			if err := st.CreateTask(task, 100); err != nil {
				t.Fatal(err)
			}
			_, err := h.Get(task.ID, tc.who)
			if tc.visible && err != nil || !tc.visible && kernel.ErrorCode(err) != kernel.CodeNotFound {
				t.Errorf("Get: %v, want visible %v", err, tc.visible)
			}
			if !tc.visible {
				if _, err := h.Cancel(task.ID, tc.who); kernel.ErrorCode(err) != kernel.CodeNotFound {
					t.Errorf("Cancel of a foreign task: %v", err)
				}
			}
		})
	}
}
