// Package app is the layercheck command line: Run dispatches to the
// subcommands, each in its own file registering itself in init(). Only main
// calls os.Exit.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/layercheck/layercheck/redact"
	"github.com/layercheck/layercheck/verify"
)

// Streams are the command's input and outputs, so tests can capture them.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// errTTY is ErrOut as Run was given it when that is a terminal, nil
	// otherwise: Run wraps ErrOut in a redacting writer, which is no
	// *os.File and holds text back until a newline, so a progress line
	// rewritten in place with "\r" goes here (through redact.String).
	errTTY io.Writer
}

// ExitError carries a process exit code without being a failure to run,
// e.g. `layercheck lint` exits 1 when it found errors.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// verdict is the exit of `layercheck node`, `layercheck cluster` and
// `layercheck verify` for a report's status: 1 when a check failed or
// could not run, else none.
func verdict(st verify.Status) error {
	if st == verify.StatusFail || st == verify.StatusError {
		return &ExitError{Code: 1}
	}
	return nil
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, s Streams) error
}

var commands = map[string]command{}

// register adds a subcommand; each command file calls it from init().
func register(name, summary string, run func(ctx context.Context, args []string, s Streams) error) {
	if _, dup := commands[name]; dup {
		panic("app: command registered twice: " + name)
	}
	commands[name] = command{name, summary, run}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: layercheck COMMAND [options]")
	fmt.Fprintln(w, "       layercheck --version")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "Commands:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'layercheck COMMAND --help' for a command's options.")
}

// Run runs the command line args (without the program name). It returns an
// *ExitError for a non-zero exit that is not a failure to run. Everything
// written to s.Out and s.ErrOut, and the error's text, passes through
// redact: no password in a URL, private key, token or secret-named
// variable's value is printed, whatever its source. The one exception is
// the standard output of `layercheck inventory` (--list, --host), a
// drop-in for ansible-inventory: tools read it as the inventory itself, so
// it carries the values verbatim as ansible-inventory does.
func Run(ctx context.Context, args []string, s Streams) error {
	if isTerminal(s.ErrOut) {
		s.errTTY = s.ErrOut
	}
	out, errOut := redact.New().Writer(s.Out), redact.New().Writer(s.ErrOut)
	if len(args) > 0 && args[0] == "inventory" {
		out = nopCloser{s.Out}
	}
	s.Out, s.ErrOut = out, errOut
	err := run(ctx, args, s)
	out.Close()
	errOut.Close()
	var ee *ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		ee.Msg = redact.String(ee.Msg)
	default:
		err = &redactedError{msg: redact.String(err.Error()), err: err}
	}
	return err
}

// nopCloser is a writer whose Close does nothing.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// redactedError is an error whose text was redacted.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func run(ctx context.Context, args []string, s Streams) error {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		writeVersion(s.Out)
		return nil
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(s.Out)
		if len(args) == 0 {
			return &ExitError{Code: 2, Msg: "no command given"}
		}
		return nil
	}
	c, ok := commands[args[0]]
	if !ok {
		usage(s.ErrOut)
		return &ExitError{Code: 2, Msg: fmt.Sprintf("unknown command %q", args[0])}
	}
	return c.run(ctx, args[1:], s)
}

// ExitCode maps Run's error to a process exit code: 0, the code of an
// *ExitError, or 1.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// multiFlag is a repeatable string flag (-i, -e).
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
