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
