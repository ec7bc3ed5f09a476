// Command gentree writes a healthy kubespray-shaped node tree (see package
// harness) for benchmarks and manual runs of `layercheck node`:
//
//	go run ./test/harness/gentree -out DIR [-now 2026-11-30T14:22:06Z] [-rsa]
//
// The tree holds throw-away private keys.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/layercheck/layercheck/test/harness"
)

func main() {
	out := flag.String("out", "", "directory to write the tree into (created)")
	now := flag.String("now", "2026-11-30T14:22:06Z", "when the certificates are made (RFC 3339)")
	rsa := flag.Bool("rsa", false, "RSA-2048 keys as kubespray makes them (default ECDSA-P256)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gentree: -out is required")
		os.Exit(2)
	}
	t, err := time.Parse(time.RFC3339, *now)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentree: -now:", err)
		os.Exit(2)
	}
	cfg := harness.Config{Now: t}
	if *rsa {
		cfg.Keys = harness.RSA2048
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gentree:", err)
		os.Exit(1)
	}
	if _, err := harness.Build(*out, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "gentree:", err)
		os.Exit(1)
	}
	fmt.Println(*out)
}
