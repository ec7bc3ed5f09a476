// Command layercheck lints kubespray inventories before cluster.yml and
// verifies kubespray clusters after it. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"

	"github.com/layercheck/layercheck/internal/app"
)

func main() {
	// A run is short and its memory is mostly the inventory, live to the
	// end: collecting when the heap has grown by 400% instead of 100%
	// halves the CPU of a large lint for about a third more peak memory.
	// GOGC, when set, decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := app.Run(ctx, os.Args[1:], app.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	stop()
	if err != nil {
		if ee, ok := err.(*app.ExitError); !ok || ee.Msg != "" {
			fmt.Fprintln(os.Stderr, "layercheck:", err)
		}
	}
	os.Exit(app.ExitCode(err))
}
