package app

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/layercheck/layercheck/parser"
)

func init() {
	register("inventory", "print the inventory as ansible-inventory --list/--host does", runInventory)
}

// runInventory is `layercheck inventory -i <inv> [-i ...] [-e ...] --list|--host <name>`:
// the inventory as ansible-core 2.19's ansible-inventory prints it (JSON,
// keys sorted, indented by four spaces). Directory sources skip what
// ansible-core would (ANSIBLE_INVENTORY_IGNORE, ANSIBLE_INVENTORY_IGNORE_REGEX
// or the ansible.cfg Ansible would read). Errors go to stderr.
//
// Exit codes are ansible-inventory's: a missing top-level source, or one no
// plugin can parse (a whole-file vault inventory, a document nested too deeply, an
// unknown alias) is a warning and exits 0; a group_vars/host_vars file that
// cannot be parsed exits 4 (AnsibleParserError), one nested too deeply 250
// (ansible-core's RecursionError); anything else, including a FIFO or
// device where a file is read (on which Ansible would hang) and the size
// and host limits, exits 1.
func runInventory(_ context.Context, args []string, s Streams) error {
	fs := flag.NewFlagSet("inventory", flag.ContinueOnError)
	fs.SetOutput(s.ErrOut)
	var inv, extra multiFlag
	fs.Var(&inv, "i", "inventory source: file or directory (repeatable)")
	fs.Var(&inv, "inventory", "same as -i")
	fs.Var(&extra, "e", "extra vars: key=value, @file or inline JSON/YAML (repeatable)")
	fs.Var(&extra, "extra-vars", "same as -e")
	list := fs.Bool("list", false, "print every group and host with its variables")
	host := fs.String("host", "", "print one host's variables")
	if err := fs.Parse(args); err != nil {
		return &ExitError{Code: 2, Msg: err.Error()}
	}
	if len(inv) == 0 {
		return &ExitError{Code: 2, Msg: "inventory: at least one -i is required"}
	}
	if *list == (*host != "") {
		return &ExitError{Code: 2, Msg: "inventory: give exactly one of --list or --host <name>"}
	}
	ev, err := parser.ParseExtraVars(extra)
	if err != nil {
		return &ExitError{Code: 1, Msg: "inventory: " + err.Error()}
	}
	ig, err := parser.AnsibleInventoryIgnore(parser.OSAnsibleCfgEnv())
	if err != nil {
		return &ExitError{Code: 1, Msg: "inventory: " + err.Error()}
	}
	i, err := parser.LoadWith(parser.LoadOptions{Ignore: ig, UnparsedIsWarning: true}, inv...)
	if err != nil {
		return &ExitError{Code: inventoryExitCode(err), Msg: "inventory: " + err.Error()}
	}
	for _, w := range i.Warnings {
		fmt.Fprintln(s.ErrOut, "[WARNING]:", w)
	}
	var out []byte
	if *list {
		out, err = i.ListJSONExtra(ev)
	} else {
		h := i.Host(*host)
		if h == nil {
			msg := fmt.Sprintf("You must pass a single valid host to --host parameter: %s", *host)
			return &ExitError{Code: 1, Msg: "inventory: " + msg}
		}
		out, err = i.HostJSON(h, ev)
	}
	if err != nil {
		return &ExitError{Code: 1, Msg: "inventory: " + err.Error()}
	}
	_, err = s.Out.Write(append(out, '\n'))
	return err
}

// inventoryExitCode is ansible-inventory's exit code for a load error.
func inventoryExitCode(err error) int {
	var de *parser.DepthError
	var ye *parser.YAMLError
	switch {
	case errors.As(err, &de):
		return 250
	case errors.As(err, &ye):
		return 4
	}
	return 1
}
