//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/kubespray"
)

// timeoutCluster bounds `artefacts.sh cluster`: kubernetes, containerd,
// helm and the add-ons from Go modules take many minutes on 2 cores the
// first time (kubernetes alone about 5 with a warm Go build cache),
// seconds once cached.
const timeoutCluster = 60 * time.Minute

// The checksum variables kubespray v2.31.0's download role reads for the
// files cluster.yml fetches with containerd, host etcd and helm.
var clusterChecksums = []string{
	"kubeadm_binary_checksum", "kubelet_binary_checksum", "kubectl_binary_checksum",
	"etcd_binary_checksum", "containerd_archive_checksum", "runc_binary_checksum",
	"cni_binary_checksum", "crictl_binary_checksum", "nerdctl_archive_checksum",
	"helm_archive_checksum",
}

var sumLine = regexp.MustCompile(`^(/\S+) (sha256:[0-9a-f]{64})$`)

// TestClusterArtefacts builds everything kubespray v2.31.0's cluster.yml
// downloads (with E2E_CNI=calico, its default network plugin and add-ons
// instead of flannel), then checks the inventory variables `artefacts.sh
// cluster` prints: each is a variable of v2.31.0, and each checksum is the
// sha256 of a file the script built.
func TestClusterArtefacts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), timeoutCluster)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "test", "e2e", "artefacts.sh"), "cluster")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("artefacts.sh cluster: %v\n%s", err, stderr.String())
	}

	vars := map[string]string{}
	if err := yaml.Unmarshal(stdout.Bytes(), &vars); err != nil {
		t.Fatalf("artefacts.sh cluster printed no YAML map of strings: %v\n%s", err, stdout.String())
	}
	cat, err := kubespray.Bundled("v2.31.0")
	if err != nil {
		t.Fatal(err)
	}
	for name := range vars {
		if cat.Lookup(name) == nil {
			t.Errorf("%s is not a variable of kubespray v2.31.0", name)
		}
	}

	// The files and sums the builds printed (stderr), each checked again.
	built := map[string]string{}
	for _, l := range strings.Split(stderr.String(), "\n") {
		m := sumLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		b, err := os.ReadFile(m[1])
		if err != nil {
			t.Fatalf("artefacts.sh printed %s: %v", m[1], err)
		}
		sum := sha256.Sum256(b)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != m[2] {
			t.Errorf("%s: artefacts.sh said %s, the file is %s", m[1], m[2], got)
		}
		built[m[2]] = m[1]
	}
	want := clusterChecksums
	if os.Getenv("E2E_CNI") == "calico" {
		// kubespray's default network plugin: calicoctl is a file it
		// downloads (its crds.yaml has kubespray's own checksum).
		want = append(want[:len(want):len(want)], "calicoctl_binary_checksum")
	}
	for _, name := range want {
		v, ok := vars[name]
		switch {
		case !ok:
			t.Errorf("artefacts.sh cluster does not set %s", name)
		case built[v] == "":
			t.Errorf("%s: %q is the sha256 of no file artefacts.sh built", name, v)
		}
	}
	if len(vars) <= len(clusterChecksums) {
		t.Errorf("artefacts.sh cluster sets no *_version beside the checksums:\n%s", stdout.String())
	}
}
