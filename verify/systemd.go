package verify

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
)

// Systemd reads the state of a unit as `systemctl show` gives it.
type Systemd interface {
	// Show returns properties such as ActiveState, SubState, UnitFileState, MainPID.
	Show(ctx context.Context, unit string) (map[string]string, error)
}

// Cmder starts commands; it is the seam between layers and the processes
// they run (in the style of sigs.k8s.io/kind/pkg/exec), so tests can give
// canned output without a real systemd.
type Cmder interface {
	// Command prepares name with args; ctx bounds the run.
	Command(ctx context.Context, name string, args ...string) Cmd
}

// Cmd is one prepared command.
type Cmd interface {
	// Output runs the command and returns its standard output. A command
	// that cannot start or exits non-zero gives a *RunError, which keeps the
	// command line and what the command printed.
	Output() ([]byte, error)
}

// RunError is a command that could not start or exited non-zero. It keeps
// the output so a report can say what the command said, not only its exit
// status.
type RunError struct {
	// Command is the command line as run (name first).
	Command []string
	// Output is what the command printed: stdout, then stderr.
	Output []byte
	// Inner is the error from os/exec (*exec.ExitError, exec.ErrNotFound, ...).
	Inner error
}

func (e *RunError) Error() string {
	msg := fmt.Sprintf("command %q failed: %v", strings.Join(e.Command, " "), e.Inner)
	if out := strings.TrimSpace(string(e.Output)); out != "" {
		const max = 512
		if len(out) > max {
			out = out[:max] + "..."
		}
		msg += ": " + out
	}
	return msg
}

// Unwrap returns the os/exec error.
func (e *RunError) Unwrap() error { return e.Inner }

// LocalCmder runs commands on this machine with os/exec.
type LocalCmder struct{}

// Command implements Cmder.
func (LocalCmder) Command(ctx context.Context, name string, args ...string) Cmd {
	return &localCmd{cmd: exec.CommandContext(ctx, name, args...), argv: append([]string{name}, args...)}
}

type localCmd struct {
	cmd  *exec.Cmd
	argv []string
}

func (c *localCmd) Output() ([]byte, error) {
	var stdout, stderr bytes.Buffer
	c.cmd.Stdout = &stdout
	c.cmd.Stderr = &stderr
	// systemctl must not page or colour: its output is parsed.
	c.cmd.Env = append(c.cmd.Environ(), "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0", "LC_ALL=C")
	if err := c.cmd.Run(); err != nil {
		return stdout.Bytes(), &RunError{Command: c.argv, Output: append(stdout.Bytes(), stderr.Bytes()...), Inner: err}
	}
	return stdout.Bytes(), nil
}

// ErrNoSystemd says the host has no usable systemd: systemctl is not
// installed, or the system was not booted with systemd (a container, WSL).
// Layers report it as a warning about the host, not as a unit failure.
var ErrNoSystemd = errors.New("systemd is not available on this host")

// SystemdProperties are the unit properties Systemctl.Show asks for. A
// property the unit's type does not have is left out of systemctl's
// output: NextElapseUSecRealtime and LastTriggerUSec are a timer's (its
// next and last run as a local time, empty when there is none).
var SystemdProperties = []string{
	"Id", "LoadState", "ActiveState", "SubState", "UnitFileState",
	"MainPID", "NRestarts", "ExecMainStatus", "Result", "FragmentPath",
	"NextElapseUSecRealtime", "LastTriggerUSec",
}

// Systemctl implements Systemd with `systemctl show <unit> --property=...`.
type Systemctl struct {
	// Cmder runs systemctl; nil means LocalCmder.
	Cmder Cmder
	// Path is the systemctl command; empty means "systemctl" from PATH.
	Path string
}

// NewSystemctl returns a Systemd that runs the local systemctl.
func NewSystemctl() *Systemctl { return &Systemctl{Cmder: LocalCmder{}} }

// Show runs `systemctl show <unit> --property=<SystemdProperties>` and
// returns the properties it printed. A unit systemd does not know is not an
// error: systemctl reports LoadState=not-found for it. Errors wrap
// ErrNoSystemd when systemctl is missing or systemd is not running; other
// failures are a *RunError carrying systemctl's output.
func (s *Systemctl) Show(ctx context.Context, unit string) (map[string]string, error) {
	if unit == "" || strings.HasPrefix(unit, "-") {
		return nil, fmt.Errorf("systemctl show: invalid unit name %q", unit)
	}
	cmder := s.Cmder
	if cmder == nil {
		cmder = LocalCmder{}
	}
	path := s.Path
	if path == "" {
		path = "systemctl"
	}
	out, err := cmder.Command(ctx, path, "show", unit, "--property="+strings.Join(SystemdProperties, ",")).Output()
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s not found: %v", ErrNoSystemd, path, err)
		}
		var re *RunError
		if errors.As(err, &re) && systemdAbsentOutput(re.Output) {
			return nil, fmt.Errorf("%w: %w", ErrNoSystemd, err)
		}
		return nil, err
	}
	props, err := ParseSystemctlShow(out)
	if err != nil {
		return nil, fmt.Errorf("systemctl show %s: %w", unit, err)
	}
	return props, nil
}

// systemdAbsentOutput recognises systemctl's messages for a host that was
// not booted with systemd or whose manager bus is unreachable.
func systemdAbsentOutput(out []byte) bool {
	s := string(out)
	for _, m := range []string{
		"System has not been booted with systemd",
		"Failed to connect to bus",
		"Failed to connect to system scope bus",
		"running in chroot, ignoring",
	} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// ParseSystemctlShow parses `systemctl show` output: one Key=Value per
// line, the value being everything after the first '='. Output without a
// single property is an error (systemctl printed something else).
func ParseSystemctlShow(out []byte) (map[string]string, error) {
	props := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("unexpected line %q (want Key=Value)", line)
		}
		props[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(props) == 0 {
		return nil, errors.New("no properties in output")
	}
	return props, nil
}
