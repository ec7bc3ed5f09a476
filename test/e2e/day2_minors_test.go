//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Trap 9: kube_version two minors ahead of the cluster. It needs a cluster
// of its own at Kubernetes 1.33 (v2.30.0 supports 1.32 to 1.34), so it
// runs last, on three new node machines: v2.30.0's cluster.yml and
// verify.yml at 1.33.6, the preflight with the inventory for v2.31.0
// (1.35.4, its default), v2.31.0's upgrade-cluster.yml without the fix,
// then the fix the preflight gives (one minor per run: kube_version 1.34.x
// first, then the release's default), each judged by kubespray's run.

// day2OldKube is trap 9's cluster: a 1.33 patch v2.30.0 has checksums for
// whose modules the Go module proxy serves. Not 1.33.6: k8s.io/kubernetes
// v1.33.6 is served, but its staging modules at v0.33.6
// (k8s.io/kube-proxy, kube-scheduler, kube-controller-manager, cri-client,
// externaljwt, ...) are refused (403); at v0.33.5 every one is served.
const day2OldKube = "1.33.5"

// day2MidKube is the minor between, the one the fix goes through: v2.30.0's
// default, which v2.31.0 also has checksums for, and which the install of
// day 2 built.
const day2MidKube = "1.34.3"

func (d *day2) trapTwoMinors() {
	t := d.t
	tr := d.res.trap("9. kube_version two minors ahead of the cluster (" + day2OldKube + " running, " + day2To + "'s default 1.35.4 in the inventory)")
	rec := d.res.phase(d.from, "trap 9's cluster: "+day2From+" cluster.yml + verify.yml at Kubernetes "+day2OldKube+", on three new node machines")
	var old map[string]any
	rec.timed("artefacts: "+day2From+" at Kubernetes "+day2OldKube+" (artefacts.sh cluster "+day2From+" "+day2OldKube+")", func() {
		out := stdoutOf(t, timeoutCluster, d.log("artefacts"), flannelEnv, filepath.Join(repoRoot, "test", "e2e", "artefacts.sh"), "cluster", day2From, day2OldKube)
		old = map[string]any{}
		if err := yaml.Unmarshal([]byte(out), &old); err != nil {
			t.Fatalf("artefacts.sh cluster %s %s printed no YAML: %v\n%s", day2From, day2OldKube, err, out)
		}
	})
	rec.timed("nodes down, three new ones up, the lab's files repo and registry again", func() {
		if out, err := run(t, timeoutNodes, d.log("nodes"), repoRoot, nil, nodesScript(), "down"); err != nil {
			t.Fatalf("nodes down: %v\n%s", err, out)
		}
		if out, err := run(t, timeoutNodes, d.log("nodes"), repoRoot, nil, nodesScript(), "up", "3"); err != nil {
			t.Fatalf("nodes up: %v\n%s", err, out)
		}
		// The lab's network namespace is new: so are its servers (the
		// registry keeps its images on disk).
		d.filesRepo = startFilesRepo(t, filepath.Join(cacheDir, "files"))
		d.registry = startRegistry(t, filepath.Join(cacheDir, "bin", "images"), filepath.Join(cacheDir, "registry"), d.log("registry"))
	})
	rec.timed("images of Kubernetes "+day2OldKube+" (and the pause and coredns of its minor) pushed", func() {
		out, err := inLab(t, timeoutImages, d.log("images"), repoRoot, nil, filepath.Join(cacheDir, "bin", "images"), "push", "--all-versions",
			"--registry", d.registry, "--build-dir", filepath.Join(cacheDir, "build"), "--rootfs", filepath.Join(nodesDir(), "rootfs"))
		if err != nil {
			t.Fatalf("images push: %v\n%s", err, tail(out, 40))
		}
	})
	d.hosts = []string{"node1", "node2", "node3"}
	d.workers = []string{"node2", "node3"}
	built := d.built[day2From]
	d.built[day2From] = old
	defer func() { d.built[day2From] = built }()
	d.extraVars = nil
	d.writeInv(d.from)
	var pr playResult
	rec.timed("ansible-playbook cluster.yml playbooks/verify.yml ("+day2From+", Kubernetes "+day2OldKube+")", func() {
		pr = d.play("trap9-install", d.from, "", filepath.Join(kubesprayDir, day2From, "cluster.yml"), filepath.Join(repoRoot, "playbooks", "verify.yml"))
		rec.Recap = pr.recap
	})
	if !pr.ok {
		tr.Preflight = "not reached: " + day2From + "'s cluster.yml at " + day2OldKube + " stopped: " + pr.failedAt
		t.Errorf("trap 9: cluster.yml (%s, Kubernetes %s) failed at %s; log %s\n%s", day2From, day2OldKube, pr.failedAt, d.log("trap9-install"), tail(pr.out, 80))
		return
	}
	d.verifyAll(rec, day2From+" at Kubernetes "+day2OldKube, pr)

	// (a) the preflight with the inventory for v2.31.0 (kube_version
	// unset: its default, 1.35.4).
	d.writeInv(d.to)
	rep, _ := d.preflight("trap 9: Kubernetes " + day2OldKube + " running, inventory for " + day2To)
	if f := findingOf(rep, "cluster-version", regexp.MustCompile(`minors ahead`)); f != nil {
		tr.Preflight = findingCell(f)
	} else {
		tr.Preflight = "MISSED; the preflight said: " + strings.Join(errorsAndWarnings(rep), "; ")
		t.Errorf("trap 9: the preflight did not report 1.35.4 two minors ahead of %s:\n%s", day2OldKube, strings.Join(errorsAndWarnings(rep), "\n"))
	}

	// (b) v2.31.0's upgrade-cluster.yml without the fix.
	rec = d.res.phase(d.to, "trap 9 without the fix: "+day2To+" upgrade-cluster.yml from Kubernetes "+day2OldKube)
	rec.timed("ansible-playbook upgrade-cluster.yml ("+day2To+", Kubernetes "+day2OldKube+" running)", func() {
		pr = d.play("trap9-upgrade", d.to, "", filepath.Join(kubesprayDir, day2To, "upgrade-cluster.yml"))
		rec.Recap = pr.recap
	})
	if pr.ok {
		tr.Without = "finished (failed=0)"
	} else {
		tr.Without = "stopped: " + pr.failedAt
	}
	tr.Without += "; after the run: " + d.versionsNow()

	// (c) one minor per run, as the preflight says: kube_version 1.34.x
	// with the same release, then its default. v2.31.0's etcd for 1.34 is
	// 3.5.29 (etcd_supported_versions): when the run without the fix has
	// already moved etcd to 3.6, that is a downgrade, which the preflight
	// must say; its fix (etcd_version at what runs) is followed, as is its
	// fix for a node the failed run left cordoned.
	rec = d.res.phase(d.to, "trap 9's fix: "+day2To+" upgrade-cluster.yml to "+day2MidKube+", then to its default 1.35.4")
	for _, bin := range []string{"kubeadm", "kubelet", "kubectl"} {
		// v2.30.0's install built 1.34.3's binaries
		d.setVar(bin+"_binary_checksum", built[bin+"_binary_checksum"])
	}
	d.setVar("kube_version", day2MidKube)
	d.writeInv(d.to)
	rep, _ = d.preflight("trap 9's fix, first step: kube_version " + day2MidKube)
	if ew := clusterProblems(rep); len(ew) > 0 {
		rec.Notes = append(rec.Notes, "preflight for the first step: "+strings.Join(ew, " • "))
	}
	// etcd stays at what node1 runs: the preflight's fix when the run
	// without the fix moved it to 3.6; else what this machine forces, as
	// v2.31.0's 3.5.29 cannot be built here.
	ev := onNode(t, "node1", "/usr/local/bin/etcd --version | head -1")
	pinned := ""
	for _, r := range []struct {
		etcd string
		vars map[string]any
	}{{d.from.EtcdVersion, built}, {d.to.EtcdVersion, d.built[day2To]}} {
		// each release's default etcd, whose checksum its artefacts give
		if strings.Contains(ev, "Version: "+r.etcd) {
			d.setVar("etcd_version", r.etcd)
			d.setVar("etcd_binary_checksum", r.vars["etcd_binary_checksum"])
			pinned = r.etcd
		}
	}
	if pinned == "" {
		t.Errorf("trap 9: node1 runs %s, which neither release's artefacts built", strings.TrimSpace(ev))
		return
	}
	switch f := findingOf(rep, "cluster-version", regexp.MustCompile(`etcd downgrade`)); {
	case f != nil:
		rec.Notes = append(rec.Notes, "the preflight's fix followed: etcd_version "+pinned+" (what node1 runs)")
	case strings.HasPrefix(pinned, "3.6."):
		t.Errorf("trap 9: node1 runs etcd %s and the preflight for kube_version %s (etcd 3.5.29 for 1.34 in %s) said no etcd downgrade", pinned, day2MidKube, day2To)
	default:
		rec.Notes = append(rec.Notes, "etcd_version "+pinned+" kept (what node1 runs): "+day2To+"'s 3.5.29 for 1.34 cannot be built here (the module proxy refuses go.etcd.io/etcd v3.5.25 and later, and only v3.5.26's source tree is here)")
	}
	d.writeInv(d.to)
	rep, _ = d.preflight("trap 9's fix, first step: kube_version " + day2MidKube + ", etcd_version " + pinned)
	if f := findingOf(rep, "cluster-membership", regexp.MustCompile(`cordoned`)); f != nil {
		// the failed upgrade cordoned node1 and kubespray will not
		// uncordon it: the preflight's fix
		for _, h := range f.Hosts {
			onNode(t, "node1", kubectl("uncordon "+h))
		}
		rec.Notes = append(rec.Notes, "the preflight's fix followed: kubectl uncordon "+strings.Join(f.Hosts, " "))
	}
	rec.timed("ansible-playbook upgrade-cluster.yml ("+day2To+", kube_version "+day2MidKube+")", func() {
		pr = d.play("trap9-upgrade-mid", d.to, "", filepath.Join(kubesprayDir, day2To, "upgrade-cluster.yml"))
	})
	if !pr.ok {
		tr.After = "upgrade-cluster.yml to " + day2MidKube + " stopped: " + pr.failedAt
		t.Errorf("trap 9: upgrade-cluster.yml to %s failed at %s; log %s\n%s", day2MidKube, pr.failedAt, d.log("trap9-upgrade-mid"), tail(pr.out, 80))
		return
	}
	tr.After = fmt.Sprintf("upgrade-cluster.yml to %s: failed=0 (%s)", day2MidKube, d.versionsNow())
	d.extraVars = nil
	d.writeInv(d.to)
	rec.timed("ansible-playbook upgrade-cluster.yml playbooks/verify.yml ("+day2To+", its default 1.35.4)", func() {
		pr = d.play("trap9-upgrade-last", d.to, "", filepath.Join(kubesprayDir, day2To, "upgrade-cluster.yml"), filepath.Join(repoRoot, "playbooks", "verify.yml"))
		rec.Recap = pr.recap
	})
	if !pr.ok {
		tr.After += "; upgrade-cluster.yml to 1.35.4 stopped: " + pr.failedAt
		t.Errorf("trap 9: upgrade-cluster.yml to 1.35.4 failed at %s; log %s\n%s", pr.failedAt, d.log("trap9-upgrade-last"), tail(pr.out, 80))
		return
	}
	tr.After += fmt.Sprintf("; upgrade-cluster.yml + verify.yml to 1.35.4: failed=0 (%s); verify.yml: %s", d.versionsNow(), verdictLine(t, pr, d.hosts))
	d.verifyAll(rec, "trap 9 after the fix", pr)
}

// versionsNow is what runs: each kubelet's version, kube-apiserver's image
// and node1's etcd.
func (d *day2) versionsNow() string {
	out := onNode(d.t, "node1", kubectl("get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.nodeInfo.kubeletVersion} {end}'")+
		"; echo; "+kubectl("-n kube-system get pod -l component=kube-apiserver -o jsonpath='{.items[*].spec.containers[0].image}'")+
		"; echo; /usr/local/bin/etcd --version | head -1")
	return strings.Join(strings.Fields(strings.ReplaceAll(out, "\n", " ; ")), " ")
}

// TestJSONReportStart: the sample inventory's warnings quote Jinja
// templates before the report; the report is the line that opens with "{".
func TestJSONReportStart(t *testing.T) {
	out := "layercheck: warning: kube_cert_dir at group_vars/k8s_cluster/k8s-cluster.yml:12:16 is \"{{ kube_config_dir }}/ssl\"\n{\n  \"hosts\": []\n}\n"
	i := jsonReportStart(out)
	if i < 0 || !strings.HasPrefix(out[i:], "{\n  \"hosts\"") {
		t.Fatalf("jsonReportStart = %d", i)
	}
	if jsonReportStart(`{"a":1}`) != 0 || jsonReportStart("no report {{ x }}") != -1 {
		t.Fatal("a report at the start, or none")
	}
}
