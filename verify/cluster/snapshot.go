package cluster

import (
	"context"
	"encoding/json"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Snapshot holds the lists the layers share: each is one list call, made
// once per run by the first layer that needs it, whatever the node count.
type Snapshot struct {
	env *Env

	nodesOnce  sync.Once
	nodes      []corev1.Node
	nodeByName map[string]*corev1.Node
	nodesErr   error

	podsOnce sync.Once
	pods     []corev1.Pod
	podsErr  error

	ownPodsOnce sync.Once
	ownPods     []corev1.Pod
	ownPodsErr  error

	dsOnce sync.Once
	ds     []appsv1.DaemonSet
	dsErr  error

	depOnce sync.Once
	deps    []appsv1.Deployment
	depErr  error
}

// Nodes lists the cluster's Nodes.
func (s *Snapshot) Nodes(ctx context.Context) ([]corev1.Node, error) {
	s.nodesOnce.Do(func() {
		l, err := s.env.Kube.ListNodes(ctx)
		if err != nil {
			s.nodesErr = errAPI(s.env, "list nodes", err)
			return
		}
		s.nodes = l.Items
		s.nodeByName = make(map[string]*corev1.Node, len(s.nodes))
		for i := range s.nodes {
			s.nodeByName[s.nodes[i].Name] = &s.nodes[i]
		}
	})
	return s.nodes, s.nodesErr
}

// NodeByName is the Nodes indexed by name, built once with the list.
func (s *Snapshot) NodeByName(ctx context.Context) (map[string]*corev1.Node, error) {
	if _, err := s.Nodes(ctx); err != nil {
		return nil, err
	}
	return s.nodeByName, nil
}

// KubeSystemPods lists every pod in kube-system. On a large cluster that is
// three or more DaemonSet pods per node (15,000 on 5,000 nodes, most of
// the bytes a run reads), so it is listed only when a DaemonSet's status
// does not show a Ready pod on every node (see checkDaemonSet).
func (s *Snapshot) KubeSystemPods(ctx context.Context) ([]corev1.Pod, error) {
	s.podsOnce.Do(func() {
		l, err := s.env.Kube.ListPods(ctx, "kube-system", metav1.ListOptions{})
		if err != nil {
			s.podsErr = errAPI(s.env, "list pods in kube-system", err)
			return
		}
		s.pods = l.Items
	})
	return s.pods, s.podsErr
}

// daemonPodLabel is the label the DaemonSet (and StatefulSet) controller
// puts on every pod it creates; static pods and Deployment pods have none.
const daemonPodLabel = "controller-revision-hash"

// KubeSystemOwnPods lists the pods in kube-system that no DaemonSet or
// StatefulSet created (label selector !controller-revision-hash): the
// control plane's static pods, kubeadm's etcd and the Deployments' pods,
// a number that does not grow with the nodes but for CoreDNS's replicas.
func (s *Snapshot) KubeSystemOwnPods(ctx context.Context) ([]corev1.Pod, error) {
	s.ownPodsOnce.Do(func() {
		l, err := s.env.Kube.ListPods(ctx, "kube-system", metav1.ListOptions{LabelSelector: "!" + daemonPodLabel})
		if err != nil {
			s.ownPodsErr = errAPI(s.env, "list pods in kube-system", err)
			return
		}
		s.ownPods = l.Items
	})
	return s.ownPods, s.ownPodsErr
}

// DaemonSets lists the DaemonSets in kube-system.
func (s *Snapshot) DaemonSets(ctx context.Context) ([]appsv1.DaemonSet, error) {
	s.dsOnce.Do(func() {
		l, err := s.env.Kube.ListDaemonSets(ctx, "kube-system")
		if err != nil {
			s.dsErr = errAPI(s.env, "list daemonsets in kube-system", err)
			return
		}
		s.ds = l.Items
	})
	return s.ds, s.dsErr
}

// Deployments lists the Deployments of every namespace (kube-system and
// the add-ons' own, such as local-path-storage).
func (s *Snapshot) Deployments(ctx context.Context) ([]appsv1.Deployment, error) {
	s.depOnce.Do(func() {
		l, err := s.env.Kube.ListDeployments(ctx, "")
		if err != nil {
			s.depErr = errAPI(s.env, "list deployments", err)
			return
		}
		s.deps = l.Items
	})
	return s.deps, s.depErr
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
