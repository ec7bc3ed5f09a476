package cluster

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/layercheck/layercheck/verify"
)

// rolloutPoll is how often a Deployment still rolling out is read again.
var rolloutPoll = 2 * time.Second

// rollingOut reports whether the Deployment controller is still bringing
// the Deployment to its replicas: it has not seen the newest spec, has not
// yet created or updated every replica (a rollout, or a scale-up such as
// dns-autoscaler's), or its Progressing condition is True for a reason
// other than NewReplicaSetAvailable (the rollout's end). Unlike kubectl
// rollout status, a Deployment that finished and later lost a pod (a crash
// loop) is not waited for, and neither is one scaled to 0 or past its
// progress deadline (ProgressDeadlineExceeded): each is judged as it is.
func rollingOut(d *appsv1.Deployment) bool {
	want := desiredReplicas(d)
	if want == 0 {
		return false
	}
	if d.Status.ObservedGeneration < d.Generation {
		return true
	}
	prog := deploymentCondition(d, appsv1.DeploymentProgressing)
	if prog != nil && prog.Reason == "ProgressDeadlineExceeded" {
		return false
	}
	if d.Status.UpdatedReplicas < want || d.Status.Replicas < want {
		return true
	}
	return prog != nil && prog.Status == corev1.ConditionTrue && prog.Reason != "NewReplicaSetAvailable"
}

// desiredReplicas is the Deployment's spec.replicas (1 when unset, as the
// API server defaults it).
func desiredReplicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas != nil {
		return *d.Spec.Replicas
	}
	return 1
}

// deploymentCondition is d's condition of type t, or nil.
func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// poll calls read every rolloutPoll while more says so, as long as the
// next read comes within limit and ctx is not done, and returns how long
// it polled. It is the one loop behind every wait for what cluster.yml
// leaves starting.
func poll(ctx context.Context, limit time.Duration, more func() bool, read func()) time.Duration {
	start := time.Now()
	deadline := start.Add(limit)
	for more() && time.Now().Add(rolloutPoll).Before(deadline) {
		sleep(ctx, rolloutPoll)
		if ctx.Err() != nil {
			break
		}
		read()
	}
	return time.Since(start)
}

// rolloutWait is how long what is still rolling out is waited for:
// RolloutWait, and never past the layer's deadline less one request.
func (env *Env) rolloutWait(ctx context.Context) time.Duration {
	limit := env.RolloutWait
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - env.Timeout; left < limit {
			limit = left
		}
	}
	return limit
}

// awaitDeployment is checkDeployment for a Deployment that may still be
// rolling out: cluster.yml applies the add-ons in its last plays and does
// not wait for them, so verify.yml right after it meets metrics-server's
// first pod not yet ready. Such a Deployment is read again until it is
// ready, stops rolling out, or rolloutWait runs out; the result says how
// long it took.
func (env *Env) awaitDeployment(ctx context.Context, check, ns, name string, deps []appsv1.Deployment) (verify.Result, *appsv1.Deployment) {
	r, d := checkDeployment(check, ns, name, deps)
	if r.Status == verify.StatusOK || d == nil || !rollingOut(d) {
		return r, d
	}
	limit := env.rolloutWait(ctx)
	if limit <= 0 {
		return r, d
	}
	var readErr error
	waited := poll(ctx, limit, func() bool { return readErr == nil && r.Status != verify.StatusOK && rollingOut(d) }, func() {
		got, err := env.Kube.GetDeployment(ctx, ns, name)
		if err != nil {
			readErr = err
			return
		}
		d = got
		r, _ = checkDeployment(check, ns, name, []appsv1.Deployment{*d})
	})
	switch {
	case readErr != nil:
		r.Msg += "; reading it again while it rolled out: " + errAPI(env, "get deployment "+ns+"/"+name, readErr).Error()
	case r.Status == verify.StatusOK:
		r.Msg += fmt.Sprintf(" (ready %s after verify began waiting for its rollout)", waited.Round(time.Second))
	case rollingOut(d):
		r.Msg += fmt.Sprintf("; still rolling out after %s of waiting (Progressing: %s)", waited.Round(100*time.Millisecond), progressing(d))
	}
	return r, d
}

// progressing is the Progressing condition's reason and message.
func progressing(d *appsv1.Deployment) string {
	if c := deploymentCondition(d, appsv1.DeploymentProgressing); c != nil {
		return c.Reason + ": " + c.Message
	}
	return "no condition yet"
}

// justAvailable reports whether Deployment d's Available condition turned
// True less than within ago. The condition's time is the API server's and
// is compared with this host's clock: a skew between them shifts the
// window by as much.
func justAvailable(d *appsv1.Deployment, within time.Duration) bool {
	if d == nil {
		return false
	}
	c := deploymentCondition(d, appsv1.DeploymentAvailable)
	return c != nil && c.Status == corev1.ConditionTrue && time.Since(c.LastTransitionTime.Time) < within
}
