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
	t, _ = AwaitFinal(ctx, h.Store, t, wait) // a failed read: what it read before
	return t, nil
}

// AwaitFinal reads task t again until it is final, ctx ends or wait has
// passed, and returns what it read last; a failed read ends the wait.
func AwaitFinal(ctx context.Context, st *store.Store, t store.Task, wait time.Duration) (store.Task, error) {
	for deadline := time.Now().Add(wait); !t.Final() && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(20 * time.Millisecond)
		n, err := st.Task(t.ID)
		if err != nil {
			return t, err
		}
		t = n
	}
	return t, nil
}
