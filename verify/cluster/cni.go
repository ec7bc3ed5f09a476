package cluster

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/layercheck/layercheck/verify"
)

func init() { register("cni", func() Layer { return cniLayer{} }) }

type cniLayer struct{}

func (cniLayer) Name() string { return "cni" }

// IPPoolGVR is calico's IPPool as kubespray's calico (KDD datastore)
// stores it: crd.projectcalico.org/v1 ippools.
var IPPoolGVR = schema.GroupVersionResource{Group: "crd.projectcalico.org", Version: "v1", Resource: "ippools"}

// cniDaemonSets are the kube-system DaemonSets of kubespray's other network
// plugins (kubespray v2.31.0 roles/network_plugin/*/templates).
var cniDaemonSets = map[string]string{
	"calico":      "calico-node",
	"flannel":     "kube-flannel",
	"cilium":      "cilium",
	"kube-ovn":    "kube-ovn-cni",
	"kube-router": "kube-router",
	"macvlan":     "",
	"cni":         "",
	"custom_cni":  "",
	"none":        "",
}

// CNIFacts is the cni layer's facts.
type CNIFacts struct {
	Plugin    string `json:"plugin"`
	PoolName  string `json:"pool_name,omitempty"`
	PoolCIDR  string `json:"pool_cidr,omitempty"`
	IPIPMode  string `json:"ipip_mode,omitempty"`
	VXLANMode string `json:"vxlan_mode,omitempty"`
	BlockSize int    `json:"block_size,omitempty"`
	// FlannelNetConf is kube-flannel-cfg's net-conf.json, as flannel
	// reads it; NetworkPolicies counts the NetworkPolicy objects flannel
	// does not enforce.
	FlannelNetConf  *FlannelNetConf `json:"flannel_net_conf,omitempty"`
	NetworkPolicies *int            `json:"network_policies,omitempty"`
}

func (cniLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	o := &env.Options
	facts := &CNIFacts{Plugin: o.KubeNetworkPlugin}
	var res []verify.Result
	ds, known := cniDaemonSets[o.KubeNetworkPlugin]
	if !known || ds == "" {
		return []verify.Result{{Check: "plugin", Status: verify.StatusSkipped,
			Msg: fmt.Sprintf("kube_network_plugin %q: no DaemonSet layercheck knows to check", o.KubeNetworkPlugin)}}, facts, nil
	}
	byName, err := env.snap.NodeByName(ctx)
	if err != nil {
		return nil, nil, err
	}
	dss, err := env.snap.DaemonSets(ctx)
	if err != nil {
		return nil, nil, err
	}
	r, err := checkDaemonSet(ctx, ds, ds, dss, env.snap.KubeSystemPods, presentNodes(env.inv, byName), byName)
	if err != nil {
		return nil, nil, err
	}
	res = append(res, r)
	if o.KubeNetworkPlugin == "flannel" {
		res = append(res, flannelChecks(ctx, env, facts)...)
		res = append(res, flannelNetworkPolicies(ctx, env, facts))
	}
	if o.KubeNetworkPlugin != "calico" {
		return res, facts, nil
	}

	facts.PoolName = o.CalicoPoolName
	pool, err := env.Dynamic.Resource(IPPoolGVR).Get(ctx, o.CalicoPoolName, metav1.GetOptions{})
	if err != nil {
		r := verify.Result{Check: "ippool", Status: verify.StatusFail,
			Msg:         fmt.Sprintf("IPPool %s (crd.projectcalico.org/v1): %v", o.CalicoPoolName, errAPI(env, "get ippool", err)),
			Remediation: "kubespray creates it in roles/network_plugin/calico/tasks/install.yml: rerun cluster.yml --tags network; calicoctl.sh get ippool -o wide lists the pools"}
		if apierrors.IsNotFound(err) {
			r.Msg = fmt.Sprintf("IPPool %s not found (crd.projectcalico.org/v1 ippools)", o.CalicoPoolName)
		}
		return append(res, r), facts, nil
	}
	facts.PoolCIDR, _, _ = unstructured.NestedString(pool.Object, "spec", "cidr")
	facts.IPIPMode, _, _ = unstructured.NestedString(pool.Object, "spec", "ipipMode")
	facts.VXLANMode, _, _ = unstructured.NestedString(pool.Object, "spec", "vxlanMode")
	facts.BlockSize = poolBlockSize(pool)
	res = append(res, poolCIDRResult(o, facts.PoolCIDR))
	if r, ok := poolBlockSizeResult(o, facts.BlockSize); ok {
		res = append(res, r)
	}
	// kubespray's own check (roles/network_plugin/calico/tasks/check.yml):
	// an unset mode in the pool is accepted.
	var modeBad []string
	for _, m := range []struct{ name, got, want string }{
		{"ipipMode", facts.IPIPMode, o.CalicoIPIPMode},
		{"vxlanMode", facts.VXLANMode, o.CalicoVXLANMode},
	} {
		if m.got != "" && m.got != m.want {
			modeBad = append(modeBad, fmt.Sprintf("%s is %s, the inventory says %s", m.name, m.got, m.want))
		}
	}
	if len(modeBad) > 0 {
		res = append(res, verify.Result{Check: "ippool_encapsulation", Status: verify.StatusFail,
			Msg:         fmt.Sprintf("IPPool %s: %s (calico_ipip_mode %s, calico_vxlan_mode %s)", o.CalicoPoolName, joinSemi(modeBad), o.CalicoIPIPMode, o.CalicoVXLANMode),
			Expected:    map[string]string{"ipipMode": o.CalicoIPIPMode, "vxlanMode": o.CalicoVXLANMode},
			Actual:      map[string]string{"ipipMode": facts.IPIPMode, "vxlanMode": facts.VXLANMode},
			Remediation: "kubespray does not change an existing pool's encapsulation: either set calico_ipip_mode/calico_vxlan_mode (and calico_network_backend) to the pool's, or patch the pool: calicoctl.sh patch ippool " + o.CalicoPoolName + " -p '{\"spec\":{\"ipipMode\":\"" + o.CalicoIPIPMode + "\",\"vxlanMode\":\"" + o.CalicoVXLANMode + "\"}}'"})
	} else {
		res = append(res, verify.Result{Check: "ippool_encapsulation", Status: verify.StatusOK,
			Msg: fmt.Sprintf("IPPool encapsulation ipipMode %s, vxlanMode %s as the inventory says", orDash(facts.IPIPMode), orDash(facts.VXLANMode))})
	}
	return res, facts, nil
}

// poolCIDRResult judges the pool's CIDR as kubespray's calico role does:
// equal to calico_pool_cidr (default kube_pods_subnet; check.yml) and
// within kube_pods_subnet (install.yml, "Ensure that calico_pool_cidr is
// within kube_pods_subnet when defined"): kube-proxy's clusterCIDR and
// kube-controller-manager's node podCIDRs are kube_pods_subnet, so pod
// addresses outside it are taken for outside traffic.
func poolCIDRResult(o *Options, cidr string) verify.Result {
	var why []string
	if cidr != o.CalicoPoolCIDR {
		why = append(why, fmt.Sprintf("the inventory says %s (calico_pool_cidr, default kube_pods_subnet)", o.CalicoPoolCIDR))
	}
	within, known := cidrWithin(cidr, o.KubePodsSubnet)
	switch {
	case !known:
		why = append(why, fmt.Sprintf("%q is not a CIDR", cidr))
	case !within:
		why = append(why, fmt.Sprintf("%s does not lie inside kube_pods_subnet %s, the clusterCIDR kube-proxy and kube-controller-manager take pod addresses from: pods get addresses they take for outside traffic", cidr, o.KubePodsSubnet))
	}
	if len(why) == 0 {
		return verify.Result{Check: "ippool_cidr", Status: verify.StatusOK,
			Msg: fmt.Sprintf("IPPool cidr is %s, within kube_pods_subnet %s", cidr, o.KubePodsSubnet)}
	}
	return verify.Result{Check: "ippool_cidr", Status: verify.StatusFail,
		Msg:      fmt.Sprintf("IPPool %s has cidr %s: %s", o.CalicoPoolName, cidr, joinSemi(why)),
		Expected: o.CalicoPoolCIDR, Actual: cidr,
		Remediation: "calico never changes an existing pool's CIDR: set kube_pods_subnet/calico_pool_cidr to the pool's (calico_pool_cidr within kube_pods_subnet, as kubespray asserts), or migrate the pool (calico's docs: migrate pods to a new IP pool)"}
}

// cidrWithin says whether CIDR inner lies inside outer (known is false
// when either is not a CIDR).
func cidrWithin(inner, outer string) (within, known bool) {
	a, err := netip.ParsePrefix(strings.TrimSpace(inner))
	if err != nil {
		return false, false
	}
	b, err := netip.ParsePrefix(strings.TrimSpace(outer))
	if err != nil {
		return false, false
	}
	return a.Bits() >= b.Bits() && b.Masked().Contains(a.Masked().Addr()), true
}

// poolBlockSize is the pool's spec.blockSize (0 when unset).
func poolBlockSize(pool *unstructured.Unstructured) int {
	bs, ok, _ := unstructured.NestedFieldNoCopy(pool.Object, "spec", "blockSize")
	if !ok {
		return 0
	}
	switch n := bs.(type) {
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

// poolBlockSizeResult compares the pool's blockSize with
// calico_pool_blocksize, as kubespray's check.yml asserts before each
// run; a pool without one gives no result.
func poolBlockSizeResult(o *Options, bs int) (verify.Result, bool) {
	if bs == 0 {
		return verify.Result{}, false
	}
	if bs == o.CalicoPoolBlocksize {
		return verify.Result{Check: "ippool_block_size", Status: verify.StatusOK,
			Msg: fmt.Sprintf("IPPool blockSize is %d (calico_pool_blocksize)", bs)}, true
	}
	return verify.Result{Check: "ippool_block_size", Status: verify.StatusFail,
		Msg:      fmt.Sprintf("IPPool %s has blockSize %d, the inventory says %d (calico_pool_blocksize): kubespray's next cluster.yml stops at its calico check (roles/network_plugin/calico/tasks/check.yml)", o.CalicoPoolName, bs, o.CalicoPoolBlocksize),
		Expected: o.CalicoPoolBlocksize, Actual: bs,
		Remediation: fmt.Sprintf("a pool's blockSize cannot change: set calico_pool_blocksize: %d in the inventory", bs)}, true
}

func orDash(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

func joinSemi(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += "; "
		}
		out += x
	}
	return out
}
