package node

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// The addons layer checks the node side of kubespray's add-ons: helm at
// {{ bin_dir }}/helm when helm_enabled (its version read from the Go build
// information in the binary, without running it), and the
// local_path_provisioner_claim_root directory when
// local_path_provisioner_enabled (required where kubespray creates it, on
// kube_control_plane hosts).
func init() { register("addons", nil, func() Layer { return addonsLayer{} }) }

type addonsLayer struct{}

func (addonsLayer) Name() string { return "addons" }

// AddonsFacts are the addons layer's facts.
type AddonsFacts struct {
	Helm          *HelmFacts `json:"helm,omitempty"`
	LocalPathRoot *PathFacts `json:"local_path_claim_root,omitempty"`
}

// HelmFacts describe the helm binary.
type HelmFacts struct {
	Path    string `json:"path"`
	Present bool   `json:"present"`
	// Version is helm's release version ("v3.17.3"), "" when unknown.
	Version string `json:"version"`
	// VersionSource says where Version was read: "ldflags" or "module".
	VersionSource string `json:"version_source,omitempty"`
}

// PathFacts describe a directory.
type PathFacts struct {
	Path    string `json:"path"`
	Present bool   `json:"present"`
	IsDir   bool   `json:"is_dir"`
}

// helmVersionCommand runs `helm version --short` (e.g. "v3.17.3+ge4da497")
// with the network timeout and returns the version part.
func helmVersionCommand(ctx context.Context, env *Env, bin string) (string, error) {
	timeout := env.NetTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := env.Cmder.Command(cctx, bin, "version", "--short").Output()
	if err != nil {
		return "", err
	}
	m := helmShortVersion.FindStringSubmatch(string(out))
	if m == nil {
		return "", fmt.Errorf("unexpected helm version output %q", strings.TrimSpace(string(out)))
	}
	return m[1], nil
}

var helmShortVersion = regexp.MustCompile(`^\s*(v\d+\.\d+\.\d+[^\s+]*)`)

// helm's Makefile stamps the version with
// -X helm.sh/helm/v3/internal/version.version=v3.x.y (v4 likewise).
var helmLdflagsVersion = regexp.MustCompile(`helm\.sh/helm/v\d+/internal/version\.version=(v?[0-9][^\s'"]*)`)

// HelmVersion reads helm's version from the Go build information of the
// binary at file (node path resolved by the caller), without executing it.
func HelmVersion(file string) (version, source string, err error) {
	return helmVersionFS(verify.OSFS{}, file)
}

// helmVersionFS is HelmVersion reading the binary through fsys.
func helmVersionFS(fsys verify.NodeFS, file string) (version, source string, err error) {
	// The errors read as buildinfo.ReadFile's.
	f, err := fsys.Open(file)
	if err != nil {
		return "", "", fmt.Errorf("could not read Go build info: %w", err)
	}
	defer f.Close()
	bi, err := buildinfo.Read(f)
	if err != nil {
		return "", "", fmt.Errorf("could not read Go build info from %s: %w", file, err)
	}
	for _, s := range bi.Settings {
		if s.Key == "-ldflags" {
			if m := helmLdflagsVersion.FindStringSubmatch(s.Value); m != nil {
				return m[1], "ldflags", nil
			}
		}
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v, "module", nil
	}
	return "", "", nil
}

func (addonsLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	o := env.Options
	host := hostName(env)
	f := &AddonsFacts{}
	var results []verify.Result
	if o.HelmEnabled && (len(o.Groups) == 0 || o.InGroup("kube_control_plane")) {
		p := path.Join(o.BinDir, "helm")
		h := &HelmFacts{Path: p}
		f.Helm = h
		real, err := env.Resolve(p)
		if err != nil {
			results = append(results, verify.Result{Check: "helm", Status: verify.StatusFail,
				Msg:         fmt.Sprintf("helm_enabled is true but %s is missing on %s", p, host),
				Remediation: "re-run kubespray's cluster.yml with --tags helm (roles/kubernetes-apps/helm installs it on kube_control_plane hosts), or set helm_enabled: false"})
		} else {
			h.Present = true
			v, src, verr := helmVersionFS(env.Files(), env.Path(real))
			if v == "" && env.Cmder != nil {
				// Release builds use -trimpath, which keeps -ldflags out of
				// the build information: ask helm itself, bounded in time.
				if hv, err := helmVersionCommand(ctx, env, env.Path(real)); err == nil {
					v, src, verr = hv, "helm version --short", nil
				}
			}
			h.Version, h.VersionSource = v, src
			switch {
			case verr != nil:
				results = append(results, verify.Result{Check: "helm", Status: verify.StatusWarn,
					Msg:         fmt.Sprintf("%s on %s is not a readable Go binary (%v); its version is unknown", p, host, verr),
					Remediation: "reinstall helm: re-run kubespray's cluster.yml with --tags helm"})
			case v == "":
				results = append(results, verify.Result{Check: "helm", Status: verify.StatusOK, Msg: fmt.Sprintf("%s present on %s (version not stamped in the binary)", p, host)})
			default:
				results = append(results, verify.Result{Check: "helm", Status: verify.StatusOK, Msg: fmt.Sprintf("%s %s present on %s", p, v, host), Actual: v})
			}
		}
	}
	if o.LocalPathProvisionerEnabled && (len(o.Groups) == 0 || o.InGroup("kube_node") || o.InGroup("kube_control_plane")) {
		p := o.LocalPathProvisionerClaimRoot
		pf := &PathFacts{Path: p}
		f.LocalPathRoot = pf
		if fi, err := env.Stat(p); err == nil {
			pf.Present, pf.IsDir = true, fi.IsDir()
		}
		switch {
		case pf.IsDir:
			results = append(results, verify.Result{Check: "local_path_claim_root", Status: verify.StatusOK, Msg: fmt.Sprintf("local_path_provisioner_claim_root %s present on %s", p, host)})
		case pf.Present:
			results = append(results, verify.Result{Check: "local_path_claim_root", Status: verify.StatusFail,
				Msg:         fmt.Sprintf("local_path_provisioner_claim_root %s on %s is not a directory", p, host),
				Remediation: "remove the file and re-run kubespray's cluster.yml with --tags local-path-provisioner"})
		case len(o.Groups) > 0 && !o.InGroup("kube_control_plane"):
			// kubespray creates the directory in "Install Kubernetes apps",
			// a play on kube_control_plane only; on the other nodes the
			// provisioner's helper pod creates it (a DirectoryOrCreate
			// hostPath) for the first volume placed there.
			results = append(results, verify.Result{Check: "local_path_claim_root", Status: verify.StatusOK,
				Msg: fmt.Sprintf("local_path_provisioner_claim_root %s not yet on %s: kubespray creates it on kube_control_plane hosts only, and local-path-provisioner creates it here with the first volume", p, host)})
		default:
			results = append(results, verify.Result{Check: "local_path_claim_root", Status: verify.StatusFail,
				Msg:         fmt.Sprintf("local_path_provisioner_enabled is true but local_path_provisioner_claim_root %s is missing on %s; PersistentVolumes there cannot be provisioned", p, host),
				Remediation: "re-run kubespray's cluster.yml with --tags local-path-provisioner, or create the directory"})
		}
	}
	if len(results) == 0 {
		return nil, f, fmt.Errorf("%w: neither helm_enabled nor local_path_provisioner_enabled applies to %s", verify.ErrNotApplicable, host)
	}
	return results, f, nil
}
