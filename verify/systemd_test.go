package verify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeCmder answers every command with canned output and records the
// command lines it was given.
type fakeCmder struct {
	out  string
	err  error
	runs [][]string
}

type fakeCmd struct {
	c    *fakeCmder
	argv []string
}

func (f *fakeCmder) Command(_ context.Context, name string, args ...string) Cmd {
	return &fakeCmd{c: f, argv: append([]string{name}, args...)}
}

func (c *fakeCmd) Output() ([]byte, error) {
	c.c.runs = append(c.c.runs, c.argv)
	if c.c.err != nil {
		return nil, &RunError{Command: c.argv, Output: []byte(c.c.out), Inner: c.c.err}
	}
	return []byte(c.c.out), nil
}

func TestSystemctlShowFake(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want map[string]string
	}{
		{
			name: "active",
			out: "Id=etcd.service\nLoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled\n" +
				"MainPID=812\nNRestarts=0\nExecMainStatus=0\nResult=success\nFragmentPath=/etc/systemd/system/etcd.service\n",
			want: map[string]string{"Id": "etcd.service", "LoadState": "loaded", "ActiveState": "active", "SubState": "running",
				"UnitFileState": "enabled", "MainPID": "812", "NRestarts": "0", "ExecMainStatus": "0", "Result": "success",
				"FragmentPath": "/etc/systemd/system/etcd.service"},
		},
		{
			name: "inactive after a crash",
			out:  "Id=etcd.service\nLoadState=loaded\nActiveState=failed\nSubState=failed\nUnitFileState=enabled\nMainPID=0\nNRestarts=5\nExecMainStatus=1\nResult=exit-code\n",
			want: map[string]string{"Id": "etcd.service", "LoadState": "loaded", "ActiveState": "failed", "SubState": "failed",
				"UnitFileState": "enabled", "MainPID": "0", "NRestarts": "5", "ExecMainStatus": "1", "Result": "exit-code"},
		},
		{
			name: "not found (systemctl exits 0, empty UnitFileState)",
			out:  "Id=etcd.service\nLoadState=not-found\nActiveState=inactive\nSubState=dead\nUnitFileState=\nMainPID=0\n",
			want: map[string]string{"Id": "etcd.service", "LoadState": "not-found", "ActiveState": "inactive", "SubState": "dead",
				"UnitFileState": "", "MainPID": "0"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fc := &fakeCmder{out: tc.out}
			got, err := (&Systemctl{Cmder: fc}).Show(context.Background(), "etcd.service")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v\nwant %v", got, tc.want)
			}
			wantArgv := []string{"systemctl", "show", "etcd.service", "--property=" + strings.Join(SystemdProperties, ",")}
			if len(fc.runs) != 1 || !reflect.DeepEqual(fc.runs[0], wantArgv) {
				t.Errorf("ran %q, want %q", fc.runs, wantArgv)
			}
		})
	}

	t.Run("garbage output", func(t *testing.T) {
		_, err := (&Systemctl{Cmder: &fakeCmder{out: "Unknown command verb shoe.\n"}}).Show(context.Background(), "etcd.service")
		if err == nil || !strings.Contains(err.Error(), `unexpected line "Unknown command verb shoe."`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("bad unit name", func(t *testing.T) {
		fc := &fakeCmder{out: "Id=x\n"}
		if _, err := (&Systemctl{Cmder: fc}).Show(context.Background(), "--all"); err == nil || len(fc.runs) != 0 {
			t.Errorf("err = %v, runs %v", err, fc.runs)
		}
	})
	t.Run("no bus keeps the output and says systemd is absent", func(t *testing.T) {
		fc := &fakeCmder{out: "System has not been booted with systemd as init system (PID 1). Can't operate.\nFailed to connect to bus: Host is down\n", err: errors.New("exit status 1")}
		_, err := (&Systemctl{Cmder: fc}).Show(context.Background(), "etcd.service")
		var re *RunError
		if !errors.Is(err, ErrNoSystemd) || !errors.As(err, &re) || !strings.Contains(err.Error(), "Failed to connect to bus: Host is down") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestSystemctlReal runs the real LocalCmder: a missing systemctl, one that
// says the host was not booted with systemd, and one that fails otherwise.
func TestSystemctlReal(t *testing.T) {
	dir := t.TempDir()

	t.Run("missing binary", func(t *testing.T) {
		s := &Systemctl{Cmder: LocalCmder{}, Path: filepath.Join(dir, "no-such-systemctl")}
		_, err := s.Show(context.Background(), "etcd.service")
		if !errors.Is(err, ErrNoSystemd) || !strings.Contains(err.Error(), "no-such-systemctl not found") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("not on PATH", func(t *testing.T) {
		t.Setenv("PATH", dir)
		_, err := NewSystemctl().Show(context.Background(), "etcd.service")
		if !errors.Is(err, ErrNoSystemd) {
			t.Errorf("err = %v", err)
		}
	})

	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("not booted with systemd", func(t *testing.T) {
		p := script("systemctl-nosd", "echo 'System has not been booted with systemd as init system (PID 1). Can'\"'\"'t operate.' >&2\necho 'Failed to connect to bus: Host is down' >&2\nexit 1\n")
		_, err := (&Systemctl{Path: p}).Show(context.Background(), "etcd.service")
		var re *RunError
		if !errors.Is(err, ErrNoSystemd) || !errors.As(err, &re) || !strings.Contains(string(re.Output), "not been booted with systemd") {
			t.Fatalf("err = %v", err)
		}
		if re.Command[0] != p || re.Command[1] != "show" || re.Command[2] != "etcd.service" {
			t.Errorf("command %q", re.Command)
		}
	})
	t.Run("other failure keeps output, is not 'absent'", func(t *testing.T) {
		p := script("systemctl-denied", "echo 'Access denied' >&2\nexit 4\n")
		_, err := (&Systemctl{Path: p}).Show(context.Background(), "etcd.service")
		var re *RunError
		if errors.Is(err, ErrNoSystemd) || !errors.As(err, &re) || !strings.Contains(err.Error(), "Access denied") || !strings.Contains(err.Error(), "exit status 4") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("real output parsed", func(t *testing.T) {
		p := script("systemctl-ok", "echo \"Id=$2\"\necho LoadState=loaded\necho ActiveState=active\necho SubState=running\necho UnitFileState=enabled\n")
		props, err := (&Systemctl{Path: p}).Show(context.Background(), "etcd.service")
		if err != nil || props["Id"] != "etcd.service" || props["SubState"] != "running" {
			t.Errorf("props %v err %v", props, err)
		}
	})
}
