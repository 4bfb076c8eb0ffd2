// Command trivialsdk is the benchmark's trivial managed extension written
// with the rukhext SDK: one handler that returns a text result. It exists to
// show what the SDK adds to a call over bench/trivial.
package main

import (
	"context"

	"github.com/rukh-dev/rukh/rukhext"
)

func main() {
	ext := rukhext.New()
	ext.Handle("trivial.sdk", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		return rukhext.Text("ok"), nil
	})
	ext.Main()
}
