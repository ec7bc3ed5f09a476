package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// The probe's service_dns check: a probe pod resolves the probe Service's
// name through the cluster DNS as every pod sees it. The pods have
// dnsPolicy ClusterFirst, so their resolv.conf names kubelet's clusterDNS:
// with kubespray's enable_nodelocaldns that is nodelocaldns_ip
// (169.254.25.10, nodelocaldns on the pod's node, which forwards dns_domain
// to CoreDNS), else CoreDNS's Service. The dns layer of the nodes asks both
// tiers from the host; this is the path from inside a pod.
//
// agnhost netexec's /dial (k8s.io/kubernetes test/images/agnhost/netexec,
// the same in agnhost 2.45 to 2.59) resolves host with the pod's resolver
// (net.ResolveTCPAddr; agnhost is built with CGO_ENABLED=0, so it is Go's
// own, reading the pod's /etc/resolv.conf), answers 400 "host and/or port
// param are invalid. <error>" when that fails, and otherwise GETs
// http://<address>/<request> and answers {"responses": [...]} or
// {"errors": [...]}. Go's resolver names the server that answered in its
// error ("lookup <name> on 169.254.25.10:53: no such host"): a second
// /dial, to a name of the probe's namespace that does not exist, reads the
// pod's nameserver that way. netexec's /shell could cat the pod's
// resolv.conf, but it needs /bin/sh in the image, which an image holding
// only /agnhost (the e2e lab's) has not.

// ProbeDNSFacts is what service_dns saw.
type ProbeDNSFacts struct {
	// Name is the Service's name the pod resolved.
	Name string `json:"name"`
	// Nameserver is the server the pod's resolver asked ("" when not read).
	Nameserver string `json:"nameserver,omitempty"`
	// Answered is the probe pod that answered through the name.
	Answered string `json:"answered,omitempty"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error,omitempty"`
}

// dialOutcome is one /dial's answer.
type dialOutcome struct {
	// resolved is false when the pod could not resolve the name
	// (lookup is then the resolver's error).
	resolved bool
	lookup   string
	server   string
	// response is the pod name that answered; dialErr why none did.
	response string
	dialErr  string
}

// lookupErr matches Go's *net.DNSError text: "lookup NAME[ on SERVER]: ERR".
var lookupErr = regexp.MustCompile(`lookup (\S+?)(?: on (\S+))?: (.+)$`)

// parseDial reads netexec's /dial answer (status 0 when unknown, through
// the service proxy's error), err being the transport's error.
func parseDial(status int, body []byte, err error) (dialOutcome, error) {
	text := strings.TrimSpace(string(body))
	if i := strings.Index(text, "host and/or port param are invalid. "); i >= 0 {
		e := strings.TrimSpace(text[i+len("host and/or port param are invalid. "):])
		o := dialOutcome{lookup: e}
		if m := lookupErr.FindStringSubmatch(e); m != nil {
			if m[2] != "" {
				if h, _, serr := net.SplitHostPort(m[2]); serr == nil {
					o.server = h
				} else {
					o.server = m[2]
				}
			}
		}
		return o, nil
	}
	var out struct {
		Responses []string `json:"responses"`
		Errors    []string `json:"errors"`
	}
	if jerr := json.Unmarshal([]byte(text), &out); jerr == nil && (len(out.Responses) > 0 || len(out.Errors) > 0) {
		o := dialOutcome{resolved: true}
		if len(out.Responses) > 0 {
			o.response = strings.TrimSpace(out.Responses[len(out.Responses)-1])
		} else {
			o.dialErr = out.Errors[len(out.Errors)-1]
		}
		return o, nil
	}
	if err != nil {
		if text != "" && !strings.Contains(err.Error(), text) {
			return dialOutcome{}, fmt.Errorf("%v: %s", err, abbreviate(text))
		}
		return dialOutcome{}, err
	}
	return dialOutcome{}, fmt.Errorf("HTTP %d: not an answer of agnhost netexec's /dial: %s", status, abbreviate(text))
}

func abbreviate(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// podDial asks a probe pod, through the Service as the service check
// reached it, to /dial http://host:80/hostname.
func podDial(ctx context.Context, env *Env, ns string, facts *ProbeFacts, host string) (dialOutcome, error) {
	params := map[string]string{"request": "hostname", "host": host, "port": "80", "protocol": "http", "tries": "1"}
	rctx, cancel := context.WithTimeout(ctx, env.Timeout+5*time.Second) // netexec's own client waits up to 5s
	defer cancel()
	if facts.Path == "cluster_ip" {
		q := url.Values{}
		for k, v := range params {
			q.Set(k, v)
		}
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, "http://"+facts.dialTarget+"/dial?"+q.Encode(), nil)
		httpc := env.HTTP
		if httpc == nil {
			httpc = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
		}
		resp, err := httpc.Do(req)
		if err != nil {
			return dialOutcome{}, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return parseDial(resp.StatusCode, b, nil)
	}
	b, err := env.Kube.ServiceProxyGet(rctx, ns, "http", ProbeName, "80", "dial", params)
	if err == nil {
		return parseDial(http.StatusOK, b, nil)
	}
	return parseDial(0, b, errAPI(env, "service proxy /dial", err))
}

// probeDNS is the service_dns result: a probe pod resolves
// <probe>.<namespace>.svc.<dns_domain> and reaches the Service through it,
// retried every probePoll within the probe's budget (a name CoreDNS has
// not seen yet, or a negative answer nodelocaldns still caches, clears
// within seconds).
func probeDNS(ctx context.Context, env *Env, ns string, facts *ProbeFacts) verify.Result {
	df := &ProbeDNSFacts{Name: fmt.Sprintf("%s.%s.svc.%s", ProbeName, ns, env.Options.DNSDomain)}
	facts.DNS = df
	var last dialOutcome
	var lastErr error
	start := time.Now()
	for {
		df.Attempts++
		last, lastErr = podDial(ctx, env, ns, facts, df.Name)
		if lastErr == nil && last.resolved && last.response != "" {
			break
		}
		if sleep(ctx, probePoll); ctx.Err() != nil {
			break
		}
	}
	took := time.Since(start).Round(100 * time.Millisecond)
	fix := fmt.Sprintf("the pod asks the nameserver of its resolv.conf, kubelet's clusterDNS: with enable_nodelocaldns nodelocaldns_ip, served by nodelocaldns on the pod's node, which forwards %s to CoreDNS. "+
		"See the nodes' dns layer (query_nodelocaldns, query_coredns, kubelet_cluster_dns), kubectl -n kube-system get pods -l k8s-app=node-local-dns -o wide, "+
		"kubectl -n kube-system logs -l k8s-app=kube-dns; dns_domain must be the cluster's (kubelet's clusterDomain)", env.Options.DNSDomain)
	switch {
	case lastErr != nil:
		df.Error = lastErr.Error()
		return verify.Result{Check: "service_dns", Status: verify.StatusFail,
			Msg:      fmt.Sprintf("a probe pod was not asked to resolve %s: %v (%d attempt(s) in %s)", df.Name, lastErr, df.Attempts, took),
			Evidence: df, Remediation: "the Service answered /hostname but not netexec's /dial: probe_image must be agnhost (netexec serves /dial)"}
	case !last.resolved:
		df.Error, df.Nameserver = last.lookup, last.server
		return verify.Result{Check: "service_dns", Status: verify.StatusFail,
			Msg: fmt.Sprintf("a probe pod could not resolve %s through nameserver %s: %s (%d attempt(s) in %s)",
				df.Name, orUnknown(last.server), last.lookup, df.Attempts, took),
			Evidence: df, Remediation: fix}
	case last.response == "":
		df.Error = last.dialErr
		return verify.Result{Check: "service_dns", Status: verify.StatusFail,
			Msg: fmt.Sprintf("a probe pod resolved %s but reached no probe pod through it: %s (%d attempt(s) in %s)",
				df.Name, last.dialErr, df.Attempts, took),
			Evidence:    df,
			Remediation: "the name resolved to the Service, which did not answer from inside a pod: kube-proxy's rules on the pod's node, or pod-to-pod traffic between nodes (calico encapsulation, a firewall dropping VXLAN udp/4789)"}
	}
	df.Answered = last.response
	// The nameserver: Go's resolver names it when a name does not exist.
	absent := fmt.Sprintf("%s-absent.%s.svc.%s.", ProbeName, ns, env.Options.DNSDomain)
	if o, err := podDial(ctx, env, ns, facts, absent); err == nil && !o.resolved && o.server != "" {
		df.Nameserver = o.server
	}
	via := "its nameserver (not read: the pod's resolver did not name it)"
	if df.Nameserver != "" {
		via = "nameserver " + df.Nameserver
	}
	return verify.Result{Check: "service_dns", Status: verify.StatusOK,
		Msg: fmt.Sprintf("a probe pod resolved %s through %s and reached the Service: %s answered (%d attempt(s))",
			df.Name, via, df.Answered, df.Attempts),
		Evidence: df}
}

func orUnknown(s string) string {
	if s == "" {
		return "(not named by the resolver)"
	}
	return s
}
