package harness

import (
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// AssertNoSecrets fails the test when out (a report, a module's output, a
// playbook log) holds a private key of the tree: a PEM header, a run of a
// PEM key's base64 bytes, or a run of a kubeconfig's client-key-data. A
// scan that finds fewer than 10 keys in the tree fails too, as the scan
// itself would be broken.
func (tr *Tree) AssertNoSecrets(t testing.TB, out string) {
	t.Helper()
	if strings.Contains(out, "PRIVATE KEY") {
		t.Error("output contains PRIVATE KEY")
	}
	keys := 0
	err := filepath.Walk(tr.Root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		rest := data
		for {
			var b *pem.Block
			b, rest = pem.Decode(rest)
			if b == nil {
				break
			}
			if strings.Contains(b.Type, "PRIVATE KEY") {
				keys++
				enc := base64.StdEncoding.EncodeToString(b.Bytes)
				if strings.Contains(out, enc[20:56]) {
					t.Errorf("output contains key bytes of %s", p)
				}
			}
		}
		for _, line := range strings.Split(string(data), "\n") {
			if i := strings.Index(line, "client-key-data: "); i >= 0 {
				keys++
				v := strings.TrimSpace(line[i+len("client-key-data: "):])
				run := v
				if len(v) >= 40 {
					run = v[10:40]
				}
				if run != "" && strings.Contains(out, run) {
					t.Errorf("output contains client-key-data of %s", p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if keys < 10 {
		t.Fatalf("secret scan saw only %d keys in the tree; the scan itself is broken", keys)
	}
}
