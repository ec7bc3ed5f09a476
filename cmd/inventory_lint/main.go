// Command inventory_lint is the Ansible binary module
// layercheck.kubespray.inventory_lint: it lints a kubespray inventory (its
// sources, group_vars and host_vars) and the play's extra vars on the
// controller, read-only, and returns the lint report.
//
// Ansible runs it through the collection's action plugin, which picks the
// binary built for the controller's architecture and adds what only the
// controller knows: the extra vars exactly as Ansible loaded them (so -e
// values arrive with the types Ansible gave them), the raw -e arguments
// (for their locations), and per host the plain values Ansible resolved.
// The module reads the inventory sources itself, so every finding names the
// file:line:col it comes from. See plugins/modules/inventory_lint.yml for
// the options and return values; lint/report does the work.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/layercheck/layercheck/lint/report"
	"github.com/layercheck/layercheck/module"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var opts report.Options
	code := module.Run(ctx, os.Args, os.Stdout, &opts, func(ctx context.Context, a *module.Args) (*module.Result, error) {
		return report.Run(ctx, &opts, a.Internals.Verbosity)
	})
	stop()
	os.Exit(code)
}
