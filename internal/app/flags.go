package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// cmdFlags is a subcommand's options with the one help layout every
// subcommand shares: long options as --name, the ansible-playbook short
// forms (-i, -e) beside their long ones, -h/--help printing the help to
// stdout (exit 0). Go's flag package also accepts -name for --name; the
// help shows only the documented forms. Hidden options (for tests) work
// but are not listed.
type cmdFlags struct {
	fs       *flag.FlagSet
	name     string
	synopsis string // after "layercheck NAME "
	about    string
	opts     []optDoc
}

type optDoc struct {
	short, long, arg, help string
	hidden                 bool
}

func newFlags(name, synopsis, about string) *cmdFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &cmdFlags{fs: fs, name: name, synopsis: synopsis, about: strings.TrimSpace(about)}
}

func (c *cmdFlags) doc(short, long, arg, help string) {
	c.opts = append(c.opts, optDoc{short: short, long: long, arg: arg, help: help})
}

// hide leaves the option --long out of the help (test-only options).
func (c *cmdFlags) hide(long string) {
	for i := range c.opts {
		if c.opts[i].long == long {
			c.opts[i].hidden = true
		}
	}
}

func (c *cmdFlags) str(p *string, short, long, arg, def, help string) {
	c.fs.StringVar(p, long, def, help)
	if short != "" {
		c.fs.StringVar(p, short, def, help)
	}
	c.doc(short, long, arg, help)
}

func (c *cmdFlags) multi(p *multiFlag, short, long, arg, help string) {
	c.fs.Var(p, long, help)
	if short != "" {
		c.fs.Var(p, short, help)
	}
	c.doc(short, long, arg, help)
}

func (c *cmdFlags) boolean(p *bool, short, long, help string) {
	c.fs.BoolVar(p, long, *p, help)
	if short != "" {
		c.fs.BoolVar(p, short, *p, help)
	}
	c.doc(short, long, "", help)
}

func (c *cmdFlags) duration(p *time.Duration, long string, def time.Duration, help string) {
	c.fs.DurationVar(p, long, def, help)
	c.doc("", long, "DURATION", withDefault(help, def.String()))
}

func (c *cmdFlags) integer(p *int, long, arg string, def int, help string) {
	c.fs.IntVar(p, long, def, help)
	c.doc("", long, arg, withDefault(help, strconv.Itoa(def)))
}

// withDefault appends "(default DEF)" to help unless help already says what
// the default is.
func withDefault(help, def string) string {
	if strings.Contains(help, "(default") {
		return help
	}
	return fmt.Sprintf("%s (default %s)", help, def)
}

// usage writes the help: synopsis, what the command does, the options.
func (c *cmdFlags) usage(w io.Writer) {
	fmt.Fprintf(w, "usage: layercheck %s %s\n\n%s\n\nOptions:\n", c.name, c.synopsis, c.about)
	type row struct{ left, help string }
	rows := []row{}
	width := 0
	for _, o := range append(append([]optDoc(nil), c.opts...), optDoc{short: "h", long: "help", help: "show this help and exit"}) {
		if o.hidden {
			continue
		}
		left := "    "
		if o.short != "" {
			left = "-" + o.short + ", "
		}
		left += "--" + o.long
		if o.arg != "" {
			left += " " + o.arg
		}
		rows = append(rows, row{left, o.help})
		width = max(width, len(left))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %-*s  %s\n", width, r.left, r.help)
	}
}

// parse parses args. help is true when the help was asked for (printed to
// s.Out; the command then returns nil, exit 0). A bad option is an
// *ExitError with code 2 naming it and pointing at --help.
func (c *cmdFlags) parse(args []string, s Streams) (help bool, err error) {
	err = c.fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		c.usage(s.Out)
		return true, nil
	}
	if err != nil {
		return false, c.usageError(err.Error())
	}
	return false, nil
}

// usageError is the exit-2 error for bad usage of the command.
func (c *cmdFlags) usageError(msg string) error {
	return &ExitError{Code: 2, Msg: fmt.Sprintf("%s: %s (see 'layercheck %s --help')", c.name, msg, c.name)}
}
