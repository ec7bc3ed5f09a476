package node

// The live member list against etcd.env and the inventory's etcd group.

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/layercheck/layercheck/verify"
)

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

func etcdCheckMembers(env *Env, ee *EtcdEnv, members []*etcdMember, facts *EtcdFacts, add func(verify.Result)) {
	for _, m := range members {
		facts.Members = append(facts.Members, EtcdMemberFacts{ID: fmt.Sprintf("%x", m.ID), Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, IsLearner: m.IsLearner})
	}
	var probs []string
	warn := false
	matched := map[uint64]bool{}
	for _, p := range ee.InitialCluster {
		var hit *etcdMember
		for _, m := range members {
			if m.Name == p.Name {
				hit = m
			}
		}
		if hit == nil {
			probs = append(probs, fmt.Sprintf("%s (%s) is in ETCD_INITIAL_CLUSTER but not a started member", p.Name, p.PeerURL))
			continue
		}
		matched[uint64(hit.ID)] = true
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
		if matched[uint64(m.ID)] {
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
		st := verify.StatusFail
		if warn && len(probs) == 1 {
			st = verify.StatusWarn
		}
		add(verify.Result{Check: "members", Status: st, Msg: "etcd member list: " + strings.Join(probs, "; "),
			Expected: ee.InitialCluster, Actual: facts.Members, Remediation: etcdRemedyMembers})
		return
	}
	names := make([]string, 0, len(members))
	for _, m := range members {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	add(verify.Result{Check: "members", Status: verify.StatusOK, Msg: fmt.Sprintf("etcd members match ETCD_INITIAL_CLUSTER: %s", strings.Join(names, ", "))})
}
