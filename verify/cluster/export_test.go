package cluster

import "time"

// SetRolloutPoll sets how often the waits read again, and returns the undo.
func SetRolloutPoll(d time.Duration) func() {
	old := rolloutPoll
	rolloutPoll = d
	return func() { rolloutPoll = old }
}

// CreatePodInNewNamespace is createPodInNewNamespace, for its test.
var CreatePodInNewNamespace = createPodInNewNamespace

// NamespaceDeletionBlocked is namespaceDeletionBlocked, for its test.
var NamespaceDeletionBlocked = namespaceDeletionBlocked

// CIDRWithin is cidrWithin, for its test.
var CIDRWithin = cidrWithin

// ParseDial is parseDial, for its test: resolved, the resolver's error and
// server, the answering pod and the dial error.
func ParseDial(status int, body []byte, err error) (resolved bool, lookup, server, response, dialErr string, perr error) {
	o, perr := parseDial(status, body, err)
	return o.resolved, o.lookup, o.server, o.response, o.dialErr, perr
}

// DecodeNodeList is decodeNodeList, for its test.
var DecodeNodeList = decodeNodeList

// ErrNotNodeList is errNotNodeList, for its test.
var ErrNotNodeList = errNotNodeList

// EarlierProbeNamespaces is earlierProbeNamespaces, for its test.
var EarlierProbeNamespaces = earlierProbeNamespaces
