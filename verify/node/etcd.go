package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// ---- the etcd layer ----

func init() { register("etcd", nil, func() Layer { return etcdLayer{} }) }

// etcdLayer checks the etcd member on hosts of the etcd group: for
// etcd_deployment_type host (and docker, which shares etcd.env and
// etcd.service) the environment file, this host's member and admin
// certificates, etcd.service and the live cluster through etcd's JSON
// gateway (etcd_gateway.go); for kubeadm the static pod manifest.
type etcdLayer struct{}

func (etcdLayer) Name() string { return "etcd" }

// EtcdFacts is the etcd layer's part of ansible_facts.layercheck_node.
// Certificates carry subjects, SANs and dates, never key material; member
// and leader ids are hex as etcdctl prints them.
type EtcdFacts struct {
	DeploymentType string `json:"etcd_deployment_type"`
	// EnvFile is the node path of the environment file read.
	EnvFile string   `json:"env_file,omitempty"`
	Env     *EtcdEnv `json:"env,omitempty"`
	// MemberName is the etcd_member_name this host must run as, and where
	// that expectation came from.
	MemberName       string `json:"member_name,omitempty"`
	MemberNameSource string `json:"member_name_source,omitempty"`
	// Certificates by role: ca, member, admin.
	Certificates map[string]*EtcdCertFacts `json:"certificates,omitempty"`
	// Service is `systemctl show etcd.service`.
	Service   map[string]string   `json:"service,omitempty"`
	Endpoints []EtcdEndpointFacts `json:"endpoints,omitempty"`
	Members   []EtcdMemberFacts   `json:"members,omitempty"`
	// Leader is the leader's member name (its hex id when unnamed).
	Leader   string             `json:"leader,omitempty"`
	Manifest *EtcdManifestFacts `json:"manifest,omitempty"`
}

// The etcd layer's metrics: etcd's health as this node sees it.
var (
	seriesEtcdEndpointHealthy = &verify.Series{Name: "layercheck_etcd_endpoint_healthy",
		Help:   "Whether an etcd endpoint of etcd.env answered its status request from this node without alarms (1) or not (0).",
		Labels: []string{"endpoint", "member"}}
	seriesEtcdHasLeader = &verify.Series{Name: "layercheck_etcd_has_leader",
		Help: "Whether the etcd endpoints this node asked agree on a leader that is in the member list (1) or not (0)."}
	seriesEtcdMembers = &verify.Series{Name: "layercheck_etcd_members",
		Help: "Number of members in the etcd member list as this node sees it (0 when no endpoint answered)."}
)

// Metrics sends each endpoint's health (an endpoint listed twice once),
// whether there is a leader (the leader check's verdict) and the member
// count, only when the layer asked etcd: a host outside the etcd group,
// or etcd run by kubeadm as a static pod, has no endpoints here.
func (f *EtcdFacts) Metrics(lr *verify.LayerReport, send func(verify.Sample)) {
	if f == nil || len(f.Endpoints) == 0 {
		return
	}
	names := map[string]string{}
	for _, m := range f.Members {
		names[m.ID] = m.Name
	}
	seen := map[string]bool{}
	for _, e := range f.Endpoints {
		if seen[e.Endpoint] {
			continue
		}
		seen[e.Endpoint] = true
		send(verify.Sample{Series: seriesEtcdEndpointHealthy, Value: verify.Gauge01(e.Healthy && e.Error == "" && len(e.Alarms) == 0),
			Labels: []string{e.Endpoint, names[e.MemberID]}})
	}
	send(verify.Sample{Series: seriesEtcdHasLeader, Value: verify.Gauge01(lr.CheckStatus("leader") == verify.StatusOK)})
	send(verify.Sample{Series: seriesEtcdMembers, Value: float64(len(f.Members))})
}

// EtcdCertFacts describes one certificate file (and its key file): times
// in UTC, DaysLeft whole days from Env.Now (negative once expired),
// KeyMatches whether the key file holds the certificate's private key.
type EtcdCertFacts struct {
	Path        string    `json:"path"`
	KeyPath     string    `json:"key_path,omitempty"`
	SubjectCN   string    `json:"subject_cn,omitempty"`
	IssuerCN    string    `json:"issuer_cn,omitempty"`
	NotBefore   time.Time `json:"not_before,omitzero"`
	NotAfter    time.Time `json:"not_after,omitzero"`
	DaysLeft    int       `json:"days_left"`
	DNSNames    []string  `json:"dns_names,omitempty"`
	IPAddresses []string  `json:"ip_addresses,omitempty"`
	KeyMatches  *bool     `json:"key_matches,omitempty"`
}

// EtcdEndpointFacts is one endpoint's Maintenance.Status answer (what
// `etcdctl endpoint status` prints): DBSize and DBSizeInUse in bytes, ids
// in hex, LatencyMS in milliseconds from the TLS dial to the status answer;
// Alarms are the server's errors (e.g. "NOSPACE"); Error says why the
// endpoint could not be asked.
type EtcdEndpointFacts struct {
	Endpoint string `json:"endpoint"`
	// Dialed is the address really contacted (after Env.AddrMap).
	Dialed      string   `json:"dialed"`
	Healthy     bool     `json:"healthy"`
	Version     string   `json:"version,omitempty"`
	DBSize      int64    `json:"db_size,omitempty"`
	DBSizeInUse int64    `json:"db_size_in_use,omitempty"`
	MemberID    string   `json:"member_id,omitempty"`
	Leader      string   `json:"leader,omitempty"`
	RaftIndex   uint64   `json:"raft_index,omitempty"`
	RaftTerm    uint64   `json:"raft_term,omitempty"`
	IsLearner   bool     `json:"is_learner,omitempty"`
	Alarms      []string `json:"errors,omitempty"`
	LatencyMS   float64  `json:"latency_ms"`
	Error       string   `json:"error,omitempty"`
}

// EtcdMemberFacts is one entry of the live member list.
type EtcdMemberFacts struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	PeerURLs   []string `json:"peer_urls"`
	ClientURLs []string `json:"client_urls"`
	IsLearner  bool     `json:"is_learner,omitempty"`
}

// EtcdManifestFacts is what the kubeadm etcd static pod manifest says.
type EtcdManifestFacts struct {
	Path  string            `json:"path"`
	Image string            `json:"image,omitempty"`
	Flags map[string]string `json:"flags,omitempty"`
}

const (
	etcdEnvPath         = "/etc/etcd.env"
	etcdDefaultCertDir  = "/etc/ssl/etcd/ssl"
	etcdDefaultNetTime  = 5 * time.Second
	etcdRemedyService   = "systemctl status etcd; journalctl -u etcd --no-pager -n 100"
	etcdRemedyRerun     = "re-run cluster.yml --tags etcd (kubespray renders /etc/etcd.env from roles/etcd/templates/etcd.env.j2)"
	etcdRemedyCerts     = "kubespray (roles/etcd/tasks/check_certs.yml) regenerates the member-/admin-<host> certificates that are missing on the first etcd host, or all of them with force_etcd_cert_refresh=true: remove the bad files there (or set the variable) and re-run cluster.yml --tags etcd"
	etcdRemedyEndpoint  = "systemctl status etcd; journalctl -u etcd --no-pager -n 100; check that the client port (2379) is reachable from this host; etcdctl --endpoints=%s endpoint status (with the ETCDCTL_* settings of /etc/etcd.env)"
	etcdRemedyMembers   = "compare `etcdctl member list -w table` with the etcd group of the inventory; remove a stale member with `etcdctl member remove <id>` and add a missing host with kubespray's scale or recover-control-plane playbooks (docs/operations/etcd.md, docs/operations/nodes.md)"
	etcdRemedyLeader    = "etcd has no leader: more than half of the members are down or cannot reach each other on the peer port (2380); " + etcdRemedyService
	etcdRemedyManifests = "re-run cluster.yml; kubeadm writes /etc/kubernetes/manifests/etcd.yaml when etcd_deployment_type is kubeadm (roles/kubernetes/control-plane/tasks/kubeadm-etcd.yml)"
)

func etcdNetTimeout(env *Env) time.Duration {
	if env.NetTimeout > 0 {
		return env.NetTimeout
	}
	return etcdDefaultNetTime
}

func (etcdLayer) Check(ctx context.Context, env *Env) ([]verify.Result, any, error) {
	o := env.Options
	if !o.InGroup("etcd") {
		return nil, nil, fmt.Errorf("%w: %s is not in the etcd group (group_names %v)", verify.ErrNotApplicable, env.Host, o.Groups)
	}
	dt := o.EtcdDeploymentType
	if dt == "" {
		dt = "host"
	}
	facts := &EtcdFacts{DeploymentType: dt}
	var res []verify.Result
	add := func(r verify.Result) { r.Layer = "etcd"; res = append(res, r) }
	switch dt {
	case "host", "docker":
	case "kubeadm":
		etcdCheckKubeadm(env, facts, add)
		return res, facts, nil
	default:
		add(verify.Result{Check: "deployment_type", Status: verify.StatusFail,
			Msg:      fmt.Sprintf("etcd_deployment_type %q is not one kubespray v2.31.0 knows (host, docker, kubeadm)", dt),
			Expected: []string{"host", "docker", "kubeadm"}, Actual: dt,
			Remediation: "set etcd_deployment_type to host (the default), docker or kubeadm"})
		return res, facts, nil
	}

	// The environment file.
	facts.EnvFile = etcdEnvPath
	data, err := env.Read(etcdEnvPath)
	if err != nil {
		add(verify.Result{Check: "env_file", Status: verify.StatusFail,
			Msg:         fmt.Sprintf("cannot read %s: %v", etcdEnvPath, etcdPathErr(err)),
			Remediation: etcdRemedyRerun})
		etcdCheckService(ctx, env, facts, add)
		return res, facts, nil
	}
	ee, err := ParseEtcdEnv(data)
	if err != nil {
		add(verify.Result{Check: "env_file", Status: verify.StatusFail, Msg: fmt.Sprintf("%s: %v", etcdEnvPath, err), Remediation: etcdRemedyRerun})
		etcdCheckService(ctx, env, facts, add)
		return res, facts, nil
	}
	facts.Env = ee
	etcdCheckEnv(env, ee, facts, add)
	tlsCfg := etcdCheckCerts(env, ee, facts, add)
	etcdCheckService(ctx, env, facts, add)
	etcdCheckLive(ctx, env, ee, tlsCfg, facts, add)
	return res, facts, nil
}

func etcdPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func etcdOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
