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

// The owner's settings of the package (docs/settings.md) arrive with each
// call, typed like input. A required setting is always present: the core
// refuses the call before it starts when the owner has not set it.
func ExampleCall_Settings() {
	ext := rukhext.New()
	ext.Handle("notes.sync", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		st := call.Settings()
		url := st.String("baseUrl") // declared with a default: present even when never set
		key := st.String("apiKey")  // required and sensitive: never log or echo it
		retries := 3
		if st.Has("retries") { // optional, no default: absent until the owner sets it
			retries = int(st.Int("retries"))
		}
		n, err := push(ctx, url, key, retries)
		if err != nil {
			return rukhext.Result{}, err
		}
		return rukhext.Text(fmt.Sprintf("synced %d notes", n)), nil
	})
	_ = ext.Main // in main: ext.Main()
}

func push(ctx context.Context, url, key string, retries int) (int, error) { return 0, nil }
