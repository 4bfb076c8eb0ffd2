package rukhext_test

import (
	"context"
	"fmt"

	"github.com/rukh-dev/rukh/rukhext"
)

// A complete extension program: main registers one handler per command id
// of its manifest and hands control to Main.
func Example() {
	ext := rukhext.New()
	ext.Handle("notes.add", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		title := call.String("title")
		if title == "" {
			return rukhext.Result{}, fmt.Errorf("title is empty") // command_failed
		}
		call.Progress("saving", 1, 2)
		// the result must match the declared schema: {"id": integer}
		return rukhext.Structured(map[string]any{"id": 7}), nil
	})
	ext.Handle("notes.show", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		return rukhext.Text(fmt.Sprintf("note %d", call.Int("id"))), nil
	})
	_ = ext.Main // in main: ext.Main()
}
