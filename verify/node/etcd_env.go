package node

// /etc/etcd.env: parsing it as systemd does, and checking the values
// kubespray renders into it.

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/verify"
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

// etcdCheckEnv checks the values kubespray renders: the member name and its
// peer URL, the member count against the inventory's etcd group, and that
// every required variable is set.
func etcdCheckEnv(env *Env, ee *EtcdEnv, facts *EtcdFacts, add func(verify.Result)) {
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
		add(verify.Result{Check: "env_file", Status: verify.StatusFail,
			Msg:         fmt.Sprintf("%s lacks %s", etcdEnvPath, strings.Join(missing, ", ")),
			Actual:      missing,
			Remediation: etcdRemedyRerun})
	case len(ee.Problems) > 0:
		add(verify.Result{Check: "env_file", Status: verify.StatusWarn,
			Msg:         fmt.Sprintf("%s parsed with %d problem(s): %s", etcdEnvPath, len(ee.Problems), strings.Join(ee.Problems, "; ")),
			Evidence:    ee.Problems,
			Remediation: etcdRemedyRerun})
	default:
		add(verify.Result{Check: "env_file", Status: verify.StatusOK,
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
		add(verify.Result{Check: "member_name", Status: verify.StatusFail,
			Msg:      fmt.Sprintf("%s: ETCD_NAME is %q but %s is etcd member %q (%s)", ee.Where(etcdEnvPath, "ETCD_NAME"), ee.Name, env.Host, want, src),
			Expected: want, Actual: ee.Name,
			Remediation: "the file belongs to another member or etcd_member_name changed; " + etcdRemedyRerun})
	case !inCluster:
		add(verify.Result{Check: "member_name", Status: verify.StatusFail,
			Msg:         fmt.Sprintf("%s: ETCD_NAME %q is not in ETCD_INITIAL_CLUSTER", ee.Where(etcdEnvPath, "ETCD_NAME"), ee.Name),
			Actual:      ee.Name,
			Remediation: etcdRemedyRerun})
	case len(ee.InitialAdvertisePeerURLs) > 0 && !slices.Contains(ee.InitialAdvertisePeerURLs, peer.PeerURL):
		add(verify.Result{Check: "member_name", Status: verify.StatusFail,
			Msg: fmt.Sprintf("%s: ETCD_INITIAL_CLUSTER gives %s=%s but ETCD_INITIAL_ADVERTISE_PEER_URLS is %s; etcd refuses to start on this mismatch",
				ee.Where(etcdEnvPath, "ETCD_INITIAL_ADVERTISE_PEER_URLS"), ee.Name, peer.PeerURL, strings.Join(ee.InitialAdvertisePeerURLs, ",")),
			Expected: peer.PeerURL, Actual: ee.InitialAdvertisePeerURLs,
			Remediation: "check ip / access_ip of the etcd hosts in the inventory; " + etcdRemedyRerun})
	default:
		add(verify.Result{Check: "member_name", Status: verify.StatusOK,
			Msg: fmt.Sprintf("%s runs as etcd member %s with peer URL %s", env.Host, ee.Name, peer.PeerURL)})
	}

	if len(o.EtcdMembers) > 0 {
		names := make([]string, len(ee.InitialCluster))
		for i, p := range ee.InitialCluster {
			names[i] = p.Name
		}
		if len(ee.InitialCluster) != len(o.EtcdMembers) {
			add(verify.Result{Check: "initial_cluster", Status: verify.StatusFail,
				Msg: fmt.Sprintf("%s: ETCD_INITIAL_CLUSTER names %d member(s) (%s) but the inventory's etcd group has %d (%s)",
					ee.Where(etcdEnvPath, "ETCD_INITIAL_CLUSTER"), len(names), strings.Join(names, ", "), len(o.EtcdMembers), strings.Join(o.EtcdMembers, ", ")),
				Expected: o.EtcdMembers, Actual: names,
				Remediation: "the etcd group changed since etcd.env was rendered; add or remove etcd hosts with kubespray's documented procedure (docs/operations/etcd.md, docs/operations/nodes.md), then re-run cluster.yml --tags etcd"})
		} else {
			add(verify.Result{Check: "initial_cluster", Status: verify.StatusOK,
				Msg: fmt.Sprintf("ETCD_INITIAL_CLUSTER names %d member(s), as many as the etcd group (%s)", len(names), strings.Join(o.EtcdMembers, ", "))})
		}
	}
	if len(ee.InitialCluster)%2 == 0 && len(ee.InitialCluster) > 0 {
		add(verify.Result{Check: "member_count", Status: verify.StatusWarn,
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
