package home

import (
	"context"
	"time"

	"github.com/rukh-dev/rukh/store"
)

// Tasks lists the tasks of endpoint ("" for all), after recording as
// cancelled those whose process is gone.
func (h *Home) Tasks(endpoint string) ([]store.Task, error) {
	if _, err := h.Store.RecoverTasks(""); err != nil {
		return nil, err
	}
	return h.Store.Tasks(endpoint)
}

// CancelTask asks task id to stop and waits up to wait for its process to
// record the end: the owner notices the flag on its next look
// (tasks.PollInterval). The task returned may still be working.
func (h *Home) CancelTask(ctx context.Context, id string, wait time.Duration) (store.Task, error) {
	t, err := h.Store.RequestTaskCancel(id)
	if err != nil {
		return store.Task{}, err
	}
	deadline := time.Now().Add(wait)
	for !t.Final() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		if n, err := h.Store.Task(id); err == nil {
			t = n
		}
	}
	return t, nil
}
