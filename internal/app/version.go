package app

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
)

// Version is the layercheck release, set at build time by the Makefile
// (-ldflags "-X .../internal/app.Version=<galaxy.yml version>"); "devel"
// in a plain `go build`.
var Version = "devel"

// Commit is the git commit, set at build time by the Makefile; empty, the
// revision Go stamped into the binary is used.
var Commit = ""

func init() {
	register("version", "print the version, commit, Go version and bundled kubespray catalogues", runVersion)
}

func runVersion(_ context.Context, args []string, s Streams) error {
	fs := newFlags("version", "[options]", "Prints layercheck's version, the commit it was built from, the Go version\nand the bundled kubespray catalogues (the default first). Also: layercheck --version.")
	if help, err := fs.parse(args, s); help || err != nil {
		return err
	}
	if fs.fs.NArg() > 0 {
		return fs.usageError(fmt.Sprintf("takes no arguments, got %q", fs.fs.Args()))
	}
	writeVersion(s.Out)
	return nil
}

// writeVersion prints, one per line:
//
//	layercheck 0.1.0
//	commit: 1a2b3c4d5e6f (modified)
//	go: go1.26.8 linux/amd64
//	kubespray catalogues: master (default), v2.31.0
func writeVersion(w io.Writer) {
	fmt.Fprintf(w, "layercheck %s\n", Version)
	fmt.Fprintf(w, "commit: %s\n", commit())
	fmt.Fprintf(w, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	cats := []string{}
	for _, v := range kubespray.Versions() {
		if v == kubespray.DefaultVersion {
			cats = append([]string{v + " (default)"}, cats...)
			continue
		}
		cats = append(cats, v)
	}
	fmt.Fprintf(w, "kubespray catalogues: %s\n", strings.Join(cats, ", "))
}

// commit is Commit, else the VCS revision Go stamped into the binary (go
// build in a git checkout), with "(modified)" for uncommitted changes;
// "unknown" without one (go test, -buildvcs=false).
func commit() string {
	if Commit != "" {
		return Commit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, modified := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified {
		rev += " (modified)"
	}
	return rev
}
