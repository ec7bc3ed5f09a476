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
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if want == 0 {
		return false
	}
	if d.Status.ObservedGeneration < d.Generation {
		return true
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return false
		}
	}
	if d.Status.UpdatedReplicas < want || d.Status.Replicas < want {
		return true
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			return c.Status == corev1.ConditionTrue && c.Reason != "NewReplicaSetAvailable"
		}
	}
	return false
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
	start := time.Now()
	deadline := start.Add(limit)
	for rollingOut(d) && time.Now().Add(rolloutPoll).Before(deadline) {
		sleep(ctx, rolloutPoll)
		if ctx.Err() != nil {
			break
		}
		got, err := env.Kube.GetDeployment(ctx, ns, name)
		if err != nil {
			r.Msg += "; reading it again while it rolled out: " + errAPI(env, "get deployment "+ns+"/"+name, err).Error()
			return r, d
		}
		d = got
		if r, _ = checkDeployment(check, ns, name, []appsv1.Deployment{*d}); r.Status == verify.StatusOK {
			r.Msg += fmt.Sprintf(" (ready %s after verify began waiting for its rollout)", time.Since(start).Round(time.Second))
			return r, d
		}
	}
	if rollingOut(d) {
		r.Msg += fmt.Sprintf("; still rolling out after %s of waiting (Progressing: %s)", time.Since(start).Round(100*time.Millisecond), progressing(d))
	}
	return r, d
}

// progressing is the Progressing condition's reason and message.
func progressing(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			return c.Reason + ": " + c.Message
		}
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
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue && time.Since(c.LastTransitionTime.Time) < within
		}
	}
	return false
}
