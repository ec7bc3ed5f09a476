// Command layercheck lints kubespray inventories before cluster.yml and
// verifies kubespray clusters after it. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/layercheck/layercheck/internal/app"
)

func main() {
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
