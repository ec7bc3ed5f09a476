package verify

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"gopkg.in/yaml.v3"
)

// EtcdEnv is /etc/etcd.env as kubespray v2.31.0 renders it from
// roles/etcd/templates/etcd.env.j2 (the EnvironmentFile of etcd.service,
// roles/etcd/templates/etcd-host.service.j2). JSON keys are the variable
// names; the file names TLS paths only, so no key material is ever held.
type EtcdEnv struct {
	// RenderedFor is the etcd version in the template's first line,
	// "# Environment file for etcd 3.6.10".
	RenderedFor string `json:"rendered_for_etcd_version,omitempty"`

	Name                     string     `json:"ETCD_NAME"`
	DataDir                  string     `json:"ETCD_DATA_DIR"`
	ListenClientURLs         []string   `json:"ETCD_LISTEN_CLIENT_URLS"`
	AdvertiseClientURLs      []string   `json:"ETCD_ADVERTISE_CLIENT_URLS"`
	ListenPeerURLs           []string   `json:"ETCD_LISTEN_PEER_URLS"`
	InitialAdvertisePeerURLs []string   `json:"ETCD_INITIAL_ADVERTISE_PEER_URLS"`
	InitialCluster           []EtcdPeer `json:"ETCD_INITIAL_CLUSTER"`
	InitialClusterState      string     `json:"ETCD_INITIAL_CLUSTER_STATE"`

	CertFile           string `json:"ETCD_CERT_FILE"`
	KeyFile            string `json:"ETCD_KEY_FILE"`
	TrustedCAFile      string `json:"ETCD_TRUSTED_CA_FILE"`
	ClientCertAuth     string `json:"ETCD_CLIENT_CERT_AUTH"`
	PeerCertFile       string `json:"ETCD_PEER_CERT_FILE"`
	PeerKeyFile        string `json:"ETCD_PEER_KEY_FILE"`
	PeerTrustedCAFile  string `json:"ETCD_PEER_TRUSTED_CA_FILE"`
	PeerClientCertAuth string `json:"ETCD_PEER_CLIENT_CERT_AUTH"`

	CtlAPI       string   `json:"ETCDCTL_API,omitempty"`
	CtlEndpoints []string `json:"ETCDCTL_ENDPOINTS"`
	CtlCACert    string   `json:"ETCDCTL_CACERT"`
	CtlCert      string   `json:"ETCDCTL_CERT"`
	CtlKey       string   `json:"ETCDCTL_KEY"`

	// Vars holds every assignment in file order of last occurrence (the
	// value systemd uses); Lines the 1-based line of each.
	Vars  map[string]string `json:"-"`
	Lines map[string]int    `json:"-"`
	// Problems are lines systemd would ignore or values that do not parse,
	// each "line N: ...".
	Problems []string `json:"problems,omitempty"`
}

// EtcdPeer is one name=peerURL pair of ETCD_INITIAL_CLUSTER; kubespray
// writes them in groups['etcd'] order, the name being the host's
// etcd_member_name (default "etcd<index>"), kubespray v2.31.0
// roles/kubespray_defaults/defaults/main/main.yml etcd_peer_addresses.
type EtcdPeer struct {
	Name    string `json:"name"`
	PeerURL string `json:"peer_url"`
}

var (
	etcdEnvKeyRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	etcdEnvVersionRE = regexp.MustCompile(`^#\s*Environment file for etcd\s+v?([0-9][0-9A-Za-z.+-]*)`)
)

// ParseEtcdEnv parses an etcd environment file the way systemd reads an
// EnvironmentFile: KEY=VALUE lines, '#' and ';' comments, blank lines,
// surrounding whitespace trimmed, one level of single or double quotes
// removed, a trailing backslash joining the next line; the last assignment
// of a key wins. Lines systemd would ignore become Problems, not errors. It
// fails only when the data holds no assignment at all.
func ParseEtcdEnv(data []byte) (*EtcdEnv, error) {
	e := &EtcdEnv{Vars: map[string]string{}, Lines: map[string]int{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		start := lineNo
		line := sc.Text()
		for strings.HasSuffix(line, `\`) && sc.Scan() {
			lineNo++
			line = strings.TrimSuffix(line, `\`) + sc.Text()
		}
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" {
			continue
		}
		if line[0] == '#' || line[0] == ';' {
			if m := etcdEnvVersionRE.FindStringSubmatch(line); m != nil && e.RenderedFor == "" {
				e.RenderedFor = m[1]
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok {
			e.Problems = append(e.Problems, fmt.Sprintf("line %d: not KEY=VALUE, ignored: %q", start, etcdTrunc(line, 80)))
			continue
		}
		if !etcdEnvKeyRE.MatchString(k) {
			e.Problems = append(e.Problems, fmt.Sprintf("line %d: invalid variable name %q, ignored", start, etcdTrunc(k, 80)))
			continue
		}
		v = etcdUnquote(strings.TrimSpace(v))
		if prev, dup := e.Lines[k]; dup {
			e.Problems = append(e.Problems, fmt.Sprintf("line %d: %s set again (first on line %d); the last value wins", start, k, prev))
		}
		e.Vars[k] = v
		e.Lines[k] = start
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(e.Vars) == 0 {
		return nil, fmt.Errorf("no KEY=VALUE assignments")
	}
	str := func(k string) string { return e.Vars[k] }
	urls := func(k string) []string {
		v, ok := e.Vars[k]
		if !ok || v == "" {
			return nil
		}
		var out []string
		for _, u := range strings.Split(v, ",") {
			u = strings.TrimSpace(u)
			if u == "" {
				continue
			}
			if err := etcdCheckURL(u); err != nil {
				e.Problems = append(e.Problems, fmt.Sprintf("line %d: %s: %v", e.Lines[k], k, err))
			}
			out = append(out, u)
		}
		return out
	}
	e.Name = str("ETCD_NAME")
	e.DataDir = str("ETCD_DATA_DIR")
	e.ListenClientURLs = urls("ETCD_LISTEN_CLIENT_URLS")
	e.AdvertiseClientURLs = urls("ETCD_ADVERTISE_CLIENT_URLS")
	e.ListenPeerURLs = urls("ETCD_LISTEN_PEER_URLS")
	e.InitialAdvertisePeerURLs = urls("ETCD_INITIAL_ADVERTISE_PEER_URLS")
	e.InitialClusterState = str("ETCD_INITIAL_CLUSTER_STATE")
	e.CertFile = str("ETCD_CERT_FILE")
	e.KeyFile = str("ETCD_KEY_FILE")
	e.TrustedCAFile = str("ETCD_TRUSTED_CA_FILE")
	e.ClientCertAuth = str("ETCD_CLIENT_CERT_AUTH")
	e.PeerCertFile = str("ETCD_PEER_CERT_FILE")
	e.PeerKeyFile = str("ETCD_PEER_KEY_FILE")
	e.PeerTrustedCAFile = str("ETCD_PEER_TRUSTED_CA_FILE")
	e.PeerClientCertAuth = str("ETCD_PEER_CLIENT_CERT_AUTH")
	e.CtlAPI = str("ETCDCTL_API")
	e.CtlEndpoints = urls("ETCDCTL_ENDPOINTS")
	e.CtlCACert = str("ETCDCTL_CACERT")
	e.CtlCert = str("ETCDCTL_CERT")
	e.CtlKey = str("ETCDCTL_KEY")
	if v, ok := e.Vars["ETCD_INITIAL_CLUSTER"]; ok {
		seen := map[string]bool{}
		for _, pair := range strings.Split(v, ",") {
			pair = strings.TrimSpace(pair)
			if pair == "" {
				continue
			}
			name, u, ok := strings.Cut(pair, "=")
			if !ok || name == "" {
				e.Problems = append(e.Problems, fmt.Sprintf("line %d: ETCD_INITIAL_CLUSTER: %q is not name=peerURL", e.Lines["ETCD_INITIAL_CLUSTER"], pair))
				continue
			}
			if err := etcdCheckURL(u); err != nil {
				e.Problems = append(e.Problems, fmt.Sprintf("line %d: ETCD_INITIAL_CLUSTER: %s: %v", e.Lines["ETCD_INITIAL_CLUSTER"], name, err))
			}
			if seen[name] {
				e.Problems = append(e.Problems, fmt.Sprintf("line %d: ETCD_INITIAL_CLUSTER names member %q twice", e.Lines["ETCD_INITIAL_CLUSTER"], name))
			}
			seen[name] = true
			e.InitialCluster = append(e.InitialCluster, EtcdPeer{Name: name, PeerURL: u})
		}
	}
	return e, nil
}

// Peer returns the ETCD_INITIAL_CLUSTER entry named name.
func (e *EtcdEnv) Peer(name string) (EtcdPeer, bool) {
	for _, p := range e.InitialCluster {
		if p.Name == name {
			return p, true
		}
	}
	return EtcdPeer{}, false
}

// Where names the line of key in file for messages ("/etc/etcd.env:14").
func (e *EtcdEnv) Where(file, key string) string {
	if n, ok := e.Lines[key]; ok {
		return file + ":" + strconv.Itoa(n)
	}
	return file
}

func etcdUnquote(v string) string {
	if len(v) >= 2 {
		switch {
		case v[0] == '"' && v[len(v)-1] == '"':
			inner := v[1 : len(v)-1]
			var b strings.Builder
			for i := 0; i < len(inner); i++ {
				if inner[i] == '\\' && i+1 < len(inner) {
					i++
				}
				b.WriteByte(inner[i])
			}
			return b.String()
		case v[0] == '\'' && v[len(v)-1] == '\'':
			return v[1 : len(v)-1]
		}
	}
	return v
}

func etcdCheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "unix" && u.Scheme != "unixs" {
		return fmt.Errorf("%q: scheme must be http or https", s)
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		if _, _, err := net.SplitHostPort(u.Host); err != nil {
			return fmt.Errorf("%q: want host:port: %v", s, err)
		}
	}
	return nil
}

func etcdTrunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// ---- the etcd layer ----

func init() { register("etcd", nil, func() Layer { return etcdLayer{} }) }

// etcdLayer checks the etcd member on hosts of the etcd group: for
// etcd_deployment_type host (and docker, which shares etcd.env and
// etcd.service) the environment file, this host's member and admin
// certificates, etcd.service and the live cluster through
// go.etcd.io/etcd/client/v3; for kubeadm the static pod manifest.
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

func (etcdLayer) Check(ctx context.Context, env *Env) ([]Result, any, error) {
	o := env.Options
	if !o.InGroup("etcd") {
		return nil, nil, fmt.Errorf("%w: %s is not in the etcd group (group_names %v)", ErrNotApplicable, env.Host, o.Groups)
	}
	dt := o.EtcdDeploymentType
	if dt == "" {
		dt = "host"
	}
	facts := &EtcdFacts{DeploymentType: dt}
	var res []Result
	add := func(r Result) { r.Layer = "etcd"; res = append(res, r) }
	switch dt {
	case "host", "docker":
	case "kubeadm":
		etcdCheckKubeadm(env, facts, add)
		return res, facts, nil
	default:
		add(Result{Check: "deployment_type", Status: StatusFail,
			Msg:      fmt.Sprintf("etcd_deployment_type %q is not one kubespray v2.31.0 knows (host, docker, kubeadm)", dt),
			Expected: []string{"host", "docker", "kubeadm"}, Actual: dt,
			Remediation: "set etcd_deployment_type to host (the default), docker or kubeadm"})
		return res, facts, nil
	}

	// The environment file.
	facts.EnvFile = etcdEnvPath
	data, err := nodeRead(env, etcdEnvPath)
	if err != nil {
		add(Result{Check: "env_file", Status: StatusFail,
			Msg:         fmt.Sprintf("cannot read %s: %v", etcdEnvPath, etcdPathErr(err)),
			Remediation: etcdRemedyRerun})
		etcdCheckService(ctx, env, facts, add)
		return res, facts, nil
	}
	ee, err := ParseEtcdEnv(data)
	if err != nil {
		add(Result{Check: "env_file", Status: StatusFail, Msg: fmt.Sprintf("%s: %v", etcdEnvPath, err), Remediation: etcdRemedyRerun})
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

// etcdCheckEnv checks the values kubespray renders: the member name and its
// peer URL, the member count against the inventory's etcd group, and that
// every required variable is set.
func etcdCheckEnv(env *Env, ee *EtcdEnv, facts *EtcdFacts, add func(Result)) {
	o := env.Options
	var missing []string
	for _, k := range []string{"ETCD_NAME", "ETCD_DATA_DIR", "ETCD_LISTEN_CLIENT_URLS", "ETCD_ADVERTISE_CLIENT_URLS",
		"ETCD_LISTEN_PEER_URLS", "ETCD_INITIAL_ADVERTISE_PEER_URLS", "ETCD_INITIAL_CLUSTER", "ETCD_INITIAL_CLUSTER_STATE",
		"ETCD_CERT_FILE", "ETCD_KEY_FILE", "ETCD_TRUSTED_CA_FILE", "ETCD_PEER_CERT_FILE", "ETCD_PEER_KEY_FILE",
		"ETCD_PEER_TRUSTED_CA_FILE", "ETCDCTL_ENDPOINTS", "ETCDCTL_CACERT", "ETCDCTL_CERT", "ETCDCTL_KEY"} {
		if ee.Vars[k] == "" {
			missing = append(missing, k)
		}
	}
	switch {
	case len(missing) > 0:
		add(Result{Check: "env_file", Status: StatusFail,
			Msg:         fmt.Sprintf("%s lacks %s", etcdEnvPath, strings.Join(missing, ", ")),
			Actual:      missing,
			Remediation: etcdRemedyRerun})
	case len(ee.Problems) > 0:
		add(Result{Check: "env_file", Status: StatusWarn,
			Msg:         fmt.Sprintf("%s parsed with %d problem(s): %s", etcdEnvPath, len(ee.Problems), strings.Join(ee.Problems, "; ")),
			Evidence:    ee.Problems,
			Remediation: etcdRemedyRerun})
	default:
		add(Result{Check: "env_file", Status: StatusOK,
			Msg: fmt.Sprintf("%s names member %s of %d (ETCD_INITIAL_CLUSTER_STATE=%s)", etcdEnvPath, ee.Name, len(ee.InitialCluster), ee.InitialClusterState)})
	}

	// This host's member name (etcd_member_name), and its peer URL.
	want, src := "", ""
	if o.EtcdMemberName != "" {
		want, src = o.EtcdMemberName, "etcd_member_name"
	} else if i := etcdIndex(o.EtcdMembers, env.Host); i >= 0 && i < len(ee.InitialCluster) && len(ee.InitialCluster) == len(o.EtcdMembers) {
		want, src = ee.InitialCluster[i].Name, fmt.Sprintf("entry %d of ETCD_INITIAL_CLUSTER (groups['etcd'] order)", i+1)
	}
	facts.MemberName, facts.MemberNameSource = want, src
	peer, inCluster := ee.Peer(ee.Name)
	switch {
	case ee.Name == "":
		// already reported as missing
	case want != "" && ee.Name != want:
		add(Result{Check: "member_name", Status: StatusFail,
			Msg:      fmt.Sprintf("%s: ETCD_NAME is %q but %s is etcd member %q (%s)", ee.Where(etcdEnvPath, "ETCD_NAME"), ee.Name, env.Host, want, src),
			Expected: want, Actual: ee.Name,
			Remediation: "the file belongs to another member or etcd_member_name changed; " + etcdRemedyRerun})
	case !inCluster:
		add(Result{Check: "member_name", Status: StatusFail,
			Msg:         fmt.Sprintf("%s: ETCD_NAME %q is not in ETCD_INITIAL_CLUSTER", ee.Where(etcdEnvPath, "ETCD_NAME"), ee.Name),
			Actual:      ee.Name,
			Remediation: etcdRemedyRerun})
	case len(ee.InitialAdvertisePeerURLs) > 0 && !slices.Contains(ee.InitialAdvertisePeerURLs, peer.PeerURL):
		add(Result{Check: "member_name", Status: StatusFail,
			Msg: fmt.Sprintf("%s: ETCD_INITIAL_CLUSTER gives %s=%s but ETCD_INITIAL_ADVERTISE_PEER_URLS is %s; etcd refuses to start on this mismatch",
				ee.Where(etcdEnvPath, "ETCD_INITIAL_ADVERTISE_PEER_URLS"), ee.Name, peer.PeerURL, strings.Join(ee.InitialAdvertisePeerURLs, ",")),
			Expected: peer.PeerURL, Actual: ee.InitialAdvertisePeerURLs,
			Remediation: "check ip / access_ip of the etcd hosts in the inventory; " + etcdRemedyRerun})
	default:
		add(Result{Check: "member_name", Status: StatusOK,
			Msg: fmt.Sprintf("%s runs as etcd member %s with peer URL %s", env.Host, ee.Name, peer.PeerURL)})
	}

	if len(o.EtcdMembers) > 0 {
		names := make([]string, len(ee.InitialCluster))
		for i, p := range ee.InitialCluster {
			names[i] = p.Name
		}
		if len(ee.InitialCluster) != len(o.EtcdMembers) {
			add(Result{Check: "initial_cluster", Status: StatusFail,
				Msg: fmt.Sprintf("%s: ETCD_INITIAL_CLUSTER names %d member(s) (%s) but the inventory's etcd group has %d (%s)",
					ee.Where(etcdEnvPath, "ETCD_INITIAL_CLUSTER"), len(names), strings.Join(names, ", "), len(o.EtcdMembers), strings.Join(o.EtcdMembers, ", ")),
				Expected: o.EtcdMembers, Actual: names,
				Remediation: "the etcd group changed since etcd.env was rendered; add or remove etcd hosts with kubespray's documented procedure (docs/operations/etcd.md, docs/operations/nodes.md), then re-run cluster.yml --tags etcd"})
		} else {
			add(Result{Check: "initial_cluster", Status: StatusOK,
				Msg: fmt.Sprintf("ETCD_INITIAL_CLUSTER names %d member(s), as many as the etcd group (%s)", len(names), strings.Join(o.EtcdMembers, ", "))})
		}
	}
	if len(ee.InitialCluster)%2 == 0 && len(ee.InitialCluster) > 0 {
		add(Result{Check: "member_count", Status: StatusWarn,
			Msg: fmt.Sprintf("the etcd cluster has an even number of members (%d): it tolerates no more failures than %d members would; kubespray refuses this unless ignore_assert_errors (roles/validate_inventory/tasks/main.yml, \"Stop if even number of etcd hosts\")",
				len(ee.InitialCluster), len(ee.InitialCluster)-1),
			Remediation: "use an odd number of hosts in the etcd group (kubespray docs/operations/etcd.md, docs/operations/nodes.md)"})
	}
}

func etcdIndex(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// etcdShortName is make-ssl-etcd.sh's cn="${host%%.*}".
func etcdShortName(host string) string {
	if i := strings.IndexByte(host, '.'); i >= 0 {
		return host[:i]
	}
	return host
}

// etcdCheckCerts checks that the TLS paths of etcd.env exist and hold this
// host's certificates as kubespray v2.31.0 roles/etcd/templates/make-ssl-etcd.sh.j2
// makes them: ca.pem (CN etcd-ca), member-<host>.pem (CN etcd-member-<host
// up to the first dot>, serving the client and peer URLs), admin-<host>.pem
// (CN etcd-admin-<host>), each signed by the CA, its key file matching. It
// returns the client TLS configuration (ETCDCTL_CACERT/CERT/KEY) for the live
// checks, or nil when that material is unusable.
func etcdCheckCerts(env *Env, ee *EtcdEnv, facts *EtcdFacts, add func(Result)) *tls.Config {
	o := env.Options
	dir := o.EtcdCertDir
	if dir == "" {
		dir = etcdDefaultCertDir
	}
	host := env.Host
	short := etcdShortName(host)
	facts.Certificates = map[string]*EtcdCertFacts{}

	// Paths as etcd.env.j2 writes them.
	if host != "" {
		want := map[string]string{
			"ETCD_TRUSTED_CA_FILE":      dir + "/ca.pem",
			"ETCD_CERT_FILE":            dir + "/member-" + host + ".pem",
			"ETCD_KEY_FILE":             dir + "/member-" + host + "-key.pem",
			"ETCD_PEER_TRUSTED_CA_FILE": dir + "/ca.pem",
			"ETCD_PEER_CERT_FILE":       dir + "/member-" + host + ".pem",
			"ETCD_PEER_KEY_FILE":        dir + "/member-" + host + "-key.pem",
			"ETCDCTL_CACERT":            dir + "/ca.pem",
			"ETCDCTL_CERT":              dir + "/admin-" + host + ".pem",
			"ETCDCTL_KEY":               dir + "/admin-" + host + "-key.pem",
		}
		var diffs []string
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if v := ee.Vars[k]; v != "" && path.Clean(v) != path.Clean(want[k]) {
				diffs = append(diffs, fmt.Sprintf("%s %s=%s (kubespray writes %s)", ee.Where(etcdEnvPath, k), k, v, want[k]))
			}
		}
		if len(diffs) > 0 {
			add(Result{Check: "tls_paths", Status: StatusWarn,
				Msg:         "etcd.env TLS paths differ from kubespray's for this host and etcd_cert_dir " + dir + ": " + strings.Join(diffs, "; "),
				Evidence:    diffs,
				Remediation: "check etcd_cert_dir; " + etcdRemedyRerun})
		}
	}

	// CA.
	caPath := ee.TrustedCAFile
	if caPath == "" {
		caPath = ee.CtlCACert
	}
	var ca *x509.Certificate
	if caPath != "" {
		cf := &EtcdCertFacts{Path: caPath}
		facts.Certificates["ca"] = cf
		c, err := etcdReadCert(env, caPath)
		if err != nil {
			add(Result{Check: "ca_certificate", Status: StatusFail, Msg: fmt.Sprintf("etcd CA %s: %v", caPath, err), Remediation: etcdRemedyCerts})
		} else {
			ca = c
			etcdFillCert(cf, c, env.Now)
			var probs []string
			if !c.IsCA {
				probs = append(probs, "is not a CA certificate (basicConstraints CA:FALSE)")
			}
			if c.Subject.CommonName != "etcd-ca" {
				probs = append(probs, fmt.Sprintf("has CN %q, make-ssl-etcd.sh makes CN etcd-ca", c.Subject.CommonName))
			}
			for _, other := range []struct{ k, v string }{{"ETCD_PEER_TRUSTED_CA_FILE", ee.PeerTrustedCAFile}, {"ETCDCTL_CACERT", ee.CtlCACert}} {
				if other.v != "" && other.v != caPath {
					if oc, err := etcdReadCert(env, other.v); err != nil || !oc.Equal(c) {
						probs = append(probs, fmt.Sprintf("%s (%s) is not the same CA", other.k, other.v))
					}
				}
			}
			st, m := etcdExpiry(env, c)
			if len(probs) > 0 {
				st = StatusFail
				m = strings.Join(probs, "; ")
			}
			add(Result{Check: "ca_certificate", Status: st, Msg: fmt.Sprintf("etcd CA %s: %s", caPath, m), Evidence: cf, Remediation: etcdRemedyIf(st, etcdRemedyCerts)})
		}
	}

	// Member (server and peer) certificate.
	var hosts []string
	for _, list := range [][]string{ee.AdvertiseClientURLs, ee.ListenClientURLs, ee.InitialAdvertisePeerURLs, ee.CtlEndpoints} {
		for _, u := range list {
			if pu, err := url.Parse(u); err == nil && pu.Hostname() != "" && !slices.Contains(hosts, pu.Hostname()) {
				hosts = append(hosts, pu.Hostname())
			}
		}
	}
	if ee.CertFile != "" {
		etcdCheckLeaf(env, facts, add, "member", "member_certificate", ee.CertFile, ee.KeyFile, "etcd-member-"+short, ca, true, hosts)
		if ee.PeerCertFile != "" && ee.PeerCertFile != ee.CertFile {
			etcdCheckLeaf(env, facts, add, "peer", "peer_certificate", ee.PeerCertFile, ee.PeerKeyFile, "etcd-member-"+short, ca, true, hosts)
		}
	}
	// Admin (etcdctl client) certificate.
	var clientCert *tls.Certificate
	if ee.CtlCert != "" {
		if etcdCheckLeaf(env, facts, add, "admin", "admin_certificate", ee.CtlCert, ee.CtlKey, "etcd-admin-"+short, ca, false, nil) {
			if c, err := etcdKeyPair(env, ee.CtlCert, ee.CtlKey); err == nil {
				clientCert = &c
			}
		}
	}
	if ca == nil || clientCert == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{*clientCert}, MinVersion: tls.VersionTLS12}
}

func etcdRemedyIf(st Status, remedy string) string {
	if st == StatusOK {
		return ""
	}
	return remedy
}

// etcdCheckLeaf checks one leaf certificate and its key; it reports whether
// the pair is usable (exists, parses, key matches, signed by ca).
func etcdCheckLeaf(env *Env, facts *EtcdFacts, add func(Result), role, check, certPath, keyPath, wantCN string, ca *x509.Certificate, server bool, hosts []string) bool {
	cf := &EtcdCertFacts{Path: certPath, KeyPath: keyPath}
	facts.Certificates[role] = cf
	c, err := etcdReadCert(env, certPath)
	if err != nil {
		add(Result{Check: check, Status: StatusFail, Msg: fmt.Sprintf("%s certificate %s: %v", role, certPath, err), Remediation: etcdRemedyCerts})
		return false
	}
	etcdFillCert(cf, c, env.Now)
	var probs []string
	usable := true
	if env.Host != "" && c.Subject.CommonName != wantCN {
		probs = append(probs, fmt.Sprintf("CN is %q, this host's is %q (make-ssl-etcd.sh)", c.Subject.CommonName, wantCN))
	}
	if keyPath == "" {
		probs = append(probs, "no key file configured")
		usable = false
	} else if pub, err := etcdReadPublicKey(env, keyPath); err != nil {
		probs = append(probs, fmt.Sprintf("key %s: %v", keyPath, err))
		usable = false
	} else {
		m := publicEqual(c.PublicKey, pub)
		cf.KeyMatches = &m
		if !m {
			probs = append(probs, fmt.Sprintf("key %s does not belong to this certificate", keyPath))
			usable = false
		}
	}
	if ca != nil {
		pool := x509.NewCertPool()
		pool.AddCert(ca)
		if _, err := c.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: c.NotBefore.Add(time.Second), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			probs = append(probs, fmt.Sprintf("not signed by the etcd CA: %v", err))
			usable = false
		}
	}
	wantEKU := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if server {
		wantEKU = append(wantEKU, x509.ExtKeyUsageServerAuth)
	}
	if len(c.ExtKeyUsage) > 0 {
		for _, u := range wantEKU {
			if !slices.Contains(c.ExtKeyUsage, u) && !slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageAny) {
				probs = append(probs, fmt.Sprintf("extended key usage lacks %s", etcdEKUName(u)))
			}
		}
	}
	if server {
		for _, h := range hosts {
			if err := c.VerifyHostname(h); err != nil {
				probs = append(probs, fmt.Sprintf("does not cover %s, an address etcd.env serves on", h))
			}
		}
	}
	st, m := etcdExpiry(env, c)
	if len(probs) > 0 {
		st = StatusFail
		m = strings.Join(probs, "; ")
	}
	if st == StatusFail && (c.NotAfter.Before(env.Now) || env.Now.Before(c.NotBefore)) {
		usable = false
	}
	add(Result{Check: check, Status: st, Msg: fmt.Sprintf("%s certificate %s (CN %s): %s", role, certPath, c.Subject.CommonName, m),
		Expected: wantCN, Actual: c.Subject.CommonName, Evidence: cf, Remediation: etcdRemedyIf(st, etcdRemedyCerts)})
	return usable
}

func etcdEKUName(u x509.ExtKeyUsage) string {
	switch u {
	case x509.ExtKeyUsageClientAuth:
		return "clientAuth"
	case x509.ExtKeyUsageServerAuth:
		return "serverAuth"
	}
	return fmt.Sprint(int(u))
}

// etcdExpiry judges validity at env.Now against cert_warn_days/cert_fail_days.
func etcdExpiry(env *Env, c *x509.Certificate) (Status, string) {
	now := env.Now
	if now.IsZero() {
		now = time.Now()
	}
	warn, fail := env.Options.CertWarnDays, env.Options.CertFailDays
	if warn <= 0 {
		warn = 30
	}
	if fail <= 0 {
		fail = 7
	}
	days := int(c.NotAfter.Sub(now).Hours() / 24)
	switch {
	case now.Before(c.NotBefore):
		return StatusFail, fmt.Sprintf("not valid before %s", c.NotBefore.UTC().Format(time.RFC3339))
	case now.After(c.NotAfter):
		return StatusFail, fmt.Sprintf("expired on %s", c.NotAfter.UTC().Format(time.RFC3339))
	case days < fail:
		return StatusFail, fmt.Sprintf("expires in %d day(s) (%s), below cert_fail_days %d", days, c.NotAfter.UTC().Format(time.RFC3339), fail)
	case days < warn:
		return StatusWarn, fmt.Sprintf("expires in %d day(s) (%s), below cert_warn_days %d", days, c.NotAfter.UTC().Format(time.RFC3339), warn)
	}
	return StatusOK, fmt.Sprintf("valid until %s", c.NotAfter.UTC().Format(time.RFC3339))
}

func etcdFillCert(cf *EtcdCertFacts, c *x509.Certificate, now time.Time) {
	if now.IsZero() {
		now = time.Now()
	}
	cf.SubjectCN = c.Subject.CommonName
	cf.IssuerCN = c.Issuer.CommonName
	cf.NotBefore = c.NotBefore.UTC()
	cf.NotAfter = c.NotAfter.UTC()
	cf.DaysLeft = int(c.NotAfter.Sub(now).Hours() / 24)
	cf.DNSNames = c.DNSNames
	for _, ip := range c.IPAddresses {
		cf.IPAddresses = append(cf.IPAddresses, ip.String())
	}
}

func etcdReadCert(env *Env, p string) (*x509.Certificate, error) {
	data, err := nodeRead(env, p)
	if err != nil {
		return nil, etcdPathErr(err)
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM CERTIFICATE block")
		}
		if b.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("certificate does not parse: %v", err)
			}
			return c, nil
		}
	}
}

// etcdReadPublicKey reads a private key file (PKCS#8, PKCS#1 or SEC 1) and
// returns only its public half; the private key never leaves this function.
func etcdReadPublicKey(env *Env, p string) (crypto.PublicKey, error) {
	data, err := nodeRead(env, p)
	if err != nil {
		return nil, etcdPathErr(err)
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM private key block")
		}
		var k any
		switch b.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, errors.New("private key does not parse")
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported private key type %T", k)
		}
		return s.Public(), nil
	}
}

func etcdKeyPair(env *Env, certPath, keyPath string) (tls.Certificate, error) {
	c, err := nodeRead(env, certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	k, err := nodeRead(env, keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(c, k)
}

// etcdCheckService reads etcd.service through Env.Systemd: it must be
// loaded, enabled, active and running (roles/etcd/templates/etcd-host.service.j2).
func etcdCheckService(ctx context.Context, env *Env, facts *EtcdFacts, add func(Result)) {
	if env.Systemd == nil {
		add(Result{Check: "service", Status: StatusWarn,
			Msg:         "systemd is absent on this host (no systemctl or not booted with systemd): etcd.service state not checked",
			Remediation: "run the node check on the etcd host itself, where kubespray installs etcd.service"})
		return
	}
	sctx, cancel := context.WithTimeout(ctx, etcdNetTimeout(env))
	defer cancel()
	props, err := env.Systemd.Show(sctx, "etcd.service")
	if err != nil {
		st := StatusFail
		if errors.Is(err, ErrNoSystemd) {
			st = StatusWarn
		}
		add(Result{Check: "service", Status: st, Msg: fmt.Sprintf("etcd.service: %v", err), Remediation: etcdRemedyService})
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
		add(Result{Check: "service", Status: StatusFail, Msg: msg, Expected: want, Actual: props, Remediation: remedy})
		return
	}
	add(Result{Check: "service", Status: StatusOK, Msg: fmt.Sprintf("etcd.service is enabled, active and running (MainPID %s)", props["MainPID"])})
}

func etcdOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// etcdEndpoints lists ETCDCTL_ENDPOINTS then ETCD_ADVERTISE_CLIENT_URLS
// (what etcdctl on this host uses, then what kube-apiserver and the other
// members use), without duplicates.
func etcdEndpoints(ee *EtcdEnv) []string {
	var eps []string
	for _, u := range append(slices.Clone(ee.CtlEndpoints), ee.AdvertiseClientURLs...) {
		if !slices.Contains(eps, u) {
			eps = append(eps, u)
		}
	}
	return eps
}

// etcdCheckLive asks every endpoint for its status and one healthy endpoint
// for the member list, each call bounded by Env.NetTimeout.
func etcdCheckLive(ctx context.Context, env *Env, ee *EtcdEnv, tlsCfg *tls.Config, facts *EtcdFacts, add func(Result)) {
	eps := etcdEndpoints(ee)
	if len(eps) == 0 {
		add(Result{Check: "endpoint_status", Status: StatusFail, Msg: "etcd.env names no client endpoint (ETCDCTL_ENDPOINTS, ETCD_ADVERTISE_CLIENT_URLS)", Remediation: etcdRemedyRerun})
		return
	}
	if tlsCfg == nil {
		add(Result{Check: "endpoint_status", Status: StatusFail,
			Msg:         "live etcd checks skipped: the CA or admin certificate/key of etcd.env (ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY) is unusable, see the certificate results",
			Remediation: etcdRemedyCerts})
		return
	}
	timeout := etcdNetTimeout(env)
	// Endpoints are asked concurrently, so a dead cluster costs one
	// NetTimeout, not one per endpoint.
	type answer struct {
		ef      EtcdEndpointFacts
		members []*etcdserverpb.Member
		err     error
	}
	answers := make([]answer, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &answers[i]
			a.ef.Endpoint = ep
			a.members, a.err = etcdStatus(ctx, env, ep, tlsCfg, timeout, &a.ef)
		}()
	}
	wg.Wait()
	var members []*etcdserverpb.Member
	var memberErr error
	for i, ep := range eps {
		a := answers[i]
		ef := a.ef
		if a.members != nil && members == nil {
			members = a.members
		}
		if a.err != nil && memberErr == nil {
			memberErr = a.err
		}
		facts.Endpoints = append(facts.Endpoints, ef)
		if ef.Error != "" {
			add(Result{Check: "endpoint_status", Status: StatusFail,
				Msg:         fmt.Sprintf("etcd endpoint %s (dialed %s): %s", ep, ef.Dialed, ef.Error),
				Evidence:    ef,
				Remediation: fmt.Sprintf(etcdRemedyEndpoint, ep)})
			continue
		}
		if len(ef.Alarms) > 0 {
			add(Result{Check: "endpoint_status", Status: StatusFail,
				Msg:         fmt.Sprintf("etcd endpoint %s reports errors: %s", ep, strings.Join(ef.Alarms, "; ")),
				Evidence:    ef,
				Remediation: "etcdctl alarm list; for NOSPACE: compact and defragment (etcdctl defrag), raise etcd_quota_backend_bytes if needed, then etcdctl alarm disarm"})
			continue
		}
		add(Result{Check: "endpoint_status", Status: StatusOK,
			Msg:      fmt.Sprintf("etcd endpoint %s: version %s, DB %d bytes, raft index %d, leader %s", ep, ef.Version, ef.DBSize, ef.RaftIndex, ef.Leader),
			Evidence: ef})
	}

	// Member list against ETCD_INITIAL_CLUSTER and the inventory.
	if members == nil {
		msg := "member list not read: no endpoint answered"
		if memberErr != nil {
			msg = fmt.Sprintf("member list not read: %v", memberErr)
		}
		add(Result{Check: "members", Status: StatusFail, Msg: msg, Remediation: etcdRemedyService})
	} else {
		etcdCheckMembers(env, ee, members, facts, add)
	}

	// Leader.
	var leaders []uint64
	for _, ef := range facts.Endpoints {
		if ef.Error != "" {
			continue
		}
		id, _ := strconv.ParseUint(ef.Leader, 16, 64)
		if !slices.Contains(leaders, id) {
			leaders = append(leaders, id)
		}
	}
	switch {
	case len(leaders) == 0:
		add(Result{Check: "leader", Status: StatusFail, Msg: "leader unknown: no etcd endpoint answered", Remediation: etcdRemedyService})
	case len(leaders) > 1:
		add(Result{Check: "leader", Status: StatusFail, Msg: fmt.Sprintf("endpoints disagree on the leader (%v)", etcdHexList(leaders)), Actual: etcdHexList(leaders), Remediation: etcdRemedyLeader})
	case leaders[0] == 0:
		add(Result{Check: "leader", Status: StatusFail, Msg: "etcd has no leader", Remediation: etcdRemedyLeader})
	default:
		name := fmt.Sprintf("%x", leaders[0])
		found := members == nil
		for _, m := range members {
			if m.ID == leaders[0] {
				found = true
				if m.Name != "" {
					name = m.Name
				}
			}
		}
		facts.Leader = name
		if !found {
			add(Result{Check: "leader", Status: StatusFail, Msg: fmt.Sprintf("leader %s is not in the member list", name), Remediation: etcdRemedyLeader})
		} else {
			add(Result{Check: "leader", Status: StatusOK, Msg: fmt.Sprintf("etcd leader is %s", name)})
		}
	}
}

func etcdHexList(ids []uint64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprintf("%x", id)
	}
	return out
}

// etcdDial returns the URL to give the client (host:port after
// Env.AddrMap) and the server name to verify (the original host).
func etcdDial(env *Env, ep string) (dialURL, dialed, serverName string, err error) {
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" {
		return "", "", "", fmt.Errorf("endpoint %q is not a URL", ep)
	}
	hostport := u.Host
	if u.Port() == "" {
		hostport = net.JoinHostPort(u.Hostname(), "2379")
	}
	dialed = env.Addr(hostport)
	du := *u
	du.Host = dialed
	return du.String(), dialed, u.Hostname(), nil
}

// etcdStatus probes one endpoint: a TLS handshake first (so a refused
// connection or a certificate error is named as such instead of surfacing
// as a gRPC deadline), then Maintenance.Status and the member list. It
// fills ef and returns the members it read.
func etcdStatus(ctx context.Context, env *Env, ep string, base *tls.Config, timeout time.Duration, ef *EtcdEndpointFacts) ([]*etcdserverpb.Member, error) {
	dialURL, dialed, serverName, err := etcdDial(env, ep)
	ef.Dialed = dialed
	if err != nil {
		ef.Error = err.Error()
		return nil, err
	}
	cfg := base.Clone()
	cfg.ServerName = serverName
	start := time.Now()

	pctx, cancel := context.WithTimeout(ctx, timeout)
	var conn net.Conn
	if strings.HasPrefix(dialURL, "http://") {
		// Plain-text client URL (not what kubespray renders): no TLS.
		cfg = nil
		conn, err = env.dial(pctx, "tcp", dialed, timeout)
	} else {
		conn, err = env.dialTLS(pctx, dialed, cfg, timeout)
	}
	cancel()
	if err != nil {
		what := "TLS connection"
		if cfg == nil {
			what = "connection"
		}
		ef.Error = fmt.Sprintf("%s failed within %s: %v", what, timeout, err)
		return nil, errors.New(ef.Error)
	}
	_ = conn.Close()

	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            []string{dialURL},
		DialTimeout:          timeout,
		DialKeepAliveTimeout: timeout,
		TLS:                  cfg,
		Logger:               zap.NewNop(),
		Context:              ctx,
		DialOptions:          env.grpcDialOptions(timeout),
	})
	if err != nil {
		ef.Error = fmt.Sprintf("client: %v", err)
		return nil, errors.New(ef.Error)
	}
	defer cli.Close()

	sctx, cancel := context.WithTimeout(ctx, timeout)
	st, err := cli.Status(sctx, dialURL)
	cancel()
	ef.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		ef.Error = fmt.Sprintf("status failed within %s: %v", timeout, err)
		return nil, errors.New(ef.Error)
	}
	ef.Healthy = len(st.Errors) == 0
	ef.Version = st.Version
	ef.DBSize = st.DbSize
	ef.DBSizeInUse = st.DbSizeInUse
	ef.Leader = fmt.Sprintf("%x", st.Leader)
	ef.RaftIndex = st.RaftIndex
	ef.RaftTerm = st.RaftTerm
	ef.IsLearner = st.IsLearner
	ef.Alarms = st.Errors
	if st.Header != nil {
		ef.MemberID = fmt.Sprintf("%x", st.Header.MemberId)
	}
	mctx, cancel := context.WithTimeout(ctx, timeout)
	ml, err := cli.MemberList(mctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("member list from %s failed within %s: %v", ep, timeout, err)
	}
	return ml.Members, nil
}

// etcdPeerMatch compares a live peer URL with the one etcd.env expects,
// also through Env.AddrMap (tests run members on loopback).
func etcdPeerMatch(env *Env, want, got string) bool {
	if want == got {
		return true
	}
	wu, err1 := url.Parse(want)
	gu, err2 := url.Parse(got)
	if err1 != nil || err2 != nil || wu.Scheme != gu.Scheme {
		return false
	}
	return wu.Host == gu.Host || env.Addr(wu.Host) == gu.Host
}

func etcdCheckMembers(env *Env, ee *EtcdEnv, members []*etcdserverpb.Member, facts *EtcdFacts, add func(Result)) {
	for _, m := range members {
		facts.Members = append(facts.Members, EtcdMemberFacts{ID: fmt.Sprintf("%x", m.ID), Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, IsLearner: m.IsLearner})
	}
	var probs []string
	warn := false
	matched := map[uint64]bool{}
	for _, p := range ee.InitialCluster {
		var hit *etcdserverpb.Member
		for _, m := range members {
			if m.Name == p.Name {
				hit = m
			}
		}
		if hit == nil {
			probs = append(probs, fmt.Sprintf("%s (%s) is in ETCD_INITIAL_CLUSTER but not a started member", p.Name, p.PeerURL))
			continue
		}
		matched[hit.ID] = true
		ok := false
		for _, u := range hit.PeerURLs {
			if etcdPeerMatch(env, p.PeerURL, u) {
				ok = true
			}
		}
		if !ok {
			probs = append(probs, fmt.Sprintf("member %s has peer URLs %s, ETCD_INITIAL_CLUSTER says %s", p.Name, strings.Join(hit.PeerURLs, ","), p.PeerURL))
		}
		if hit.IsLearner {
			warn = true
			probs = append(probs, fmt.Sprintf("member %s is still a learner", p.Name))
		}
	}
	for _, m := range members {
		if matched[m.ID] {
			continue
		}
		if m.Name == "" {
			probs = append(probs, fmt.Sprintf("member %x (%s) was added but never started", m.ID, strings.Join(m.PeerURLs, ",")))
		} else {
			probs = append(probs, fmt.Sprintf("member %s (%x) is not in ETCD_INITIAL_CLUSTER", m.Name, m.ID))
		}
	}
	if n := len(env.Options.EtcdMembers); n > 0 && n != len(members) {
		probs = append(probs, fmt.Sprintf("the cluster has %d member(s), the inventory's etcd group %d (%s)", len(members), n, strings.Join(env.Options.EtcdMembers, ", ")))
	}
	if len(probs) > 0 {
		st := StatusFail
		if warn && len(probs) == 1 {
			st = StatusWarn
		}
		add(Result{Check: "members", Status: st, Msg: "etcd member list: " + strings.Join(probs, "; "),
			Expected: ee.InitialCluster, Actual: facts.Members, Remediation: etcdRemedyMembers})
		return
	}
	names := make([]string, 0, len(members))
	for _, m := range members {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	add(Result{Check: "members", Status: StatusOK, Msg: fmt.Sprintf("etcd members match ETCD_INITIAL_CLUSTER: %s", strings.Join(names, ", "))})
}

// ---- etcd_deployment_type kubeadm ----

// etcdCheckKubeadm checks the static pod manifest kubeadm writes when
// kubespray runs etcd through kubeadm: kube_config_dir/manifests/etcd.yaml
// exists, names an image, --data-dir and the TLS flags, and the files those
// flags name exist.
func etcdCheckKubeadm(env *Env, facts *EtcdFacts, add func(Result)) {
	dir := env.Options.KubeConfigDir
	if dir == "" {
		dir = "/etc/kubernetes"
	}
	p := dir + "/manifests/etcd.yaml"
	mf := &EtcdManifestFacts{Path: p, Flags: map[string]string{}}
	facts.Manifest = mf
	add(Result{Check: "deployment_type", Status: StatusOK, Msg: "etcd_deployment_type is kubeadm: etcd runs as the kubeadm static pod " + p + ", not as etcd.service"})
	data, err := nodeRead(env, p)
	if err != nil {
		add(Result{Check: "static_pod_manifest", Status: StatusFail, Msg: fmt.Sprintf("cannot read %s: %v", p, etcdPathErr(err)), Remediation: etcdRemedyManifests})
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
		add(Result{Check: "static_pod_manifest", Status: StatusFail, Msg: fmt.Sprintf("%s: %v", p, err), Remediation: etcdRemedyManifests})
		return
	}
	idx := -1
	for i, c := range pod.Spec.Containers {
		if c.Name == "etcd" || (idx < 0 && strings.Contains(c.Image, "etcd")) {
			idx = i
		}
	}
	if idx < 0 {
		add(Result{Check: "static_pod_manifest", Status: StatusFail, Msg: p + " has no etcd container", Remediation: etcdRemedyManifests})
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
		if _, err := statNode(env, v); err != nil {
			probs = append(probs, fmt.Sprintf("--%s=%s: %v", f, v, etcdPathErr(err)))
		}
	}
	if len(probs) > 0 {
		add(Result{Check: "static_pod_manifest", Status: StatusFail, Msg: p + ": " + strings.Join(probs, "; "), Evidence: mf, Remediation: etcdRemedyManifests})
		return
	}
	add(Result{Check: "static_pod_manifest", Status: StatusOK, Msg: fmt.Sprintf("%s runs %s with --data-dir=%s", p, c.Image, mf.Flags["data-dir"]), Evidence: mf})
}
