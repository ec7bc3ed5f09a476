// Command layercheck lints kubespray inventories before cluster.yml and
// verifies kubespray clusters after it. See README.md.
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"

	"github.com/layercheck/layercheck/internal/app"
)

// gcSwitch is set a finalizer that runs after the first collection.
type gcSwitch struct{ _ *int }

// tuneGC: a run is short and its memory is mostly the inventory, live to
// the end. No collection until the heap reaches 256 MiB (a 5,000-host lint
// never collects), then collecting when the heap has grown by 400% instead
// of 100% (half the CPU of a 1,000,000-host lint, for about a third more
// peak memory). GOGC or GOMEMLIMIT, when set, decide.
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(256 << 20)
	runtime.SetFinalizer(&gcSwitch{}, func(*gcSwitch) {
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}

func main() {
	tuneGC()
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
