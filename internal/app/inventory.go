package app

import (
	"context"
	"errors"
	"fmt"
	"io"

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
	fs := newFlags("inventory", "-i INVENTORY [-i ...] [-e EXTRA]... --list | --host NAME", `Prints the inventory as ansible-core 2.19's ansible-inventory --list or
--host does (JSON, keys sorted). Directory sources skip what ansible-core
would. Exit codes are ansible-inventory's: a missing or unparsable source
only warns (exit 0), a group_vars/host_vars file that cannot be parsed
exits 4 (250 when nested too deeply), a special file or a limit exits 1,
bad usage 2.`)
	var inv, extra multiFlag
	fs.multi(&inv, "i", "inventory", "INVENTORY", "inventory source: file or directory (repeatable)")
	fs.multi(&extra, "e", "extra-vars", "EXTRA", "extra vars: key=value, @file or inline JSON/YAML (repeatable)")
	var listAll bool
	var hostName string
	fs.boolean(&listAll, "", "list", "print every group and host with its variables")
	fs.str(&hostName, "", "host", "NAME", "", "print one host's variables")
	if help, err := fs.parse(args, s); help || err != nil {
		return err
	}
	list, host := &listAll, &hostName
	if len(inv) == 0 {
		return fs.usageError("at least one -i is required")
	}
	if *list == (*host != "") {
		return fs.usageError("give exactly one of --list or --host NAME")
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
		// written as it is rendered: the output can be many times the
		// size of the inventory (every host carries its group variables)
		if err := i.WriteListJSON(s.Out, ev); err != nil {
			return err
		}
		_, err = io.WriteString(s.Out, "\n")
		return err
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
