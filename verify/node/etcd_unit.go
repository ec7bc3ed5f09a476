package node

// How etcd runs: etcd.service under systemd (etcd_deployment_type host)
// or kubeadm's static pod manifest (etcd_deployment_type kubeadm).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/layercheck/layercheck/verify"
)

// etcdCheckService reads etcd.service through Env.Systemd: it must be
// loaded, enabled, active and running (roles/etcd/templates/etcd-host.service.j2).
func etcdCheckService(ctx context.Context, env *Env, facts *EtcdFacts, add func(verify.Result)) {
	if env.Systemd == nil {
		add(verify.Result{Check: "service", Status: verify.StatusWarn,
			Msg:         "systemd is absent on this host (no systemctl or not booted with systemd): etcd.service state not checked",
			Remediation: "run the node check on the etcd host itself, where kubespray installs etcd.service"})
		return
	}
	sctx, cancel := context.WithTimeout(ctx, etcdNetTimeout(env))
	defer cancel()
	props, err := env.Systemd.Show(sctx, "etcd.service")
	if err != nil {
		st := verify.StatusFail
		if errors.Is(err, verify.ErrNoSystemd) {
			st = verify.StatusWarn
		}
		add(verify.Result{Check: "service", Status: st, Msg: fmt.Sprintf("etcd.service: %v", err), Remediation: etcdRemedyService})
		return
	}
	facts.Service = props
	want := map[string]string{"LoadState": "loaded", "ActiveState": "active", "SubState": "running", "UnitFileState": "enabled"}
	var probs []string
	for _, k := range []string{"LoadState", "ActiveState", "SubState", "UnitFileState"} {
		if props[k] != want[k] {
			probs = append(probs, fmt.Sprintf("%s=%s (want %s)", k, etcdOr(props[k], `""`), want[k]))
		}
	}
	if len(probs) > 0 {
		msg := "etcd.service is not healthy: " + strings.Join(probs, ", ")
		remedy := etcdRemedyService
		if props["LoadState"] == "not-found" {
			msg = "etcd.service is not installed (LoadState=not-found)"
			remedy = "re-run cluster.yml --tags etcd (kubespray installs /etc/systemd/system/etcd.service from roles/etcd/templates/etcd-host.service.j2)"
		}
		add(verify.Result{Check: "service", Status: verify.StatusFail, Msg: msg, Expected: want, Actual: props, Remediation: remedy})
		return
	}
	add(verify.Result{Check: "service", Status: verify.StatusOK, Msg: fmt.Sprintf("etcd.service is enabled, active and running (MainPID %s)", props["MainPID"])})
}

// ---- etcd_deployment_type kubeadm ----

// etcdCheckKubeadm checks the static pod manifest kubeadm writes when
// kubespray runs etcd through kubeadm: kube_config_dir/manifests/etcd.yaml
// exists, names an image, --data-dir and the TLS flags, and the files those
// flags name exist.
func etcdCheckKubeadm(env *Env, facts *EtcdFacts, add func(verify.Result)) {
	dir := env.Options.KubeConfigDir
	if dir == "" {
		dir = "/etc/kubernetes"
	}
	p := dir + "/manifests/etcd.yaml"
	mf := &EtcdManifestFacts{Path: p, Flags: map[string]string{}}
	facts.Manifest = mf
	add(verify.Result{Check: "deployment_type", Status: verify.StatusOK, Msg: "etcd_deployment_type is kubeadm: etcd runs as the kubeadm static pod " + p + ", not as etcd.service"})
	data, err := env.Read(p)
	if err != nil {
		add(verify.Result{Check: "static_pod_manifest", Status: verify.StatusFail, Msg: fmt.Sprintf("cannot read %s: %v", p, etcdPathErr(err)), Remediation: etcdRemedyManifests})
		return
	}
	var pod struct {
		Spec struct {
			Containers []struct {
				Name    string   `yaml:"name"`
				Image   string   `yaml:"image"`
				Command []string `yaml:"command"`
				Args    []string `yaml:"args"`
			} `yaml:"containers"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(data, &pod); err != nil {
		add(verify.Result{Check: "static_pod_manifest", Status: verify.StatusFail, Msg: fmt.Sprintf("%s: %v", p, err), Remediation: etcdRemedyManifests})
		return
	}
	idx := -1
	for i, c := range pod.Spec.Containers {
		if c.Name == "etcd" || (idx < 0 && strings.Contains(c.Image, "etcd")) {
			idx = i
		}
	}
	if idx < 0 {
		add(verify.Result{Check: "static_pod_manifest", Status: verify.StatusFail, Msg: p + " has no etcd container", Remediation: etcdRemedyManifests})
		return
	}
	c := pod.Spec.Containers[idx]
	mf.Image = c.Image
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
			mf.Flags[strings.TrimPrefix(k, "--")] = v
		}
	}
	var probs []string
	if c.Image == "" {
		probs = append(probs, "no image")
	}
	for _, f := range []string{"data-dir", "cert-file", "key-file", "trusted-ca-file", "peer-cert-file", "peer-key-file", "peer-trusted-ca-file"} {
		v := mf.Flags[f]
		if v == "" {
			probs = append(probs, "no --"+f)
			continue
		}
		if f == "data-dir" {
			continue
		}
		if _, err := env.Stat(v); err != nil {
			probs = append(probs, fmt.Sprintf("--%s=%s: %v", f, v, etcdPathErr(err)))
		}
	}
	if len(probs) > 0 {
		add(verify.Result{Check: "static_pod_manifest", Status: verify.StatusFail, Msg: p + ": " + strings.Join(probs, "; "), Evidence: mf, Remediation: etcdRemedyManifests})
		return
	}
	add(verify.Result{Check: "static_pod_manifest", Status: verify.StatusOK, Msg: fmt.Sprintf("%s runs %s with --data-dir=%s", p, c.Image, mf.Flags["data-dir"]), Evidence: mf})
}
