// Command cluster_facts is the layercheck.kubespray.cluster_facts Ansible
// module: a binary module run once per cluster by roles/verify, on the first
// kube_control_plane host with /etc/kubernetes/admin.conf (become) or on
// the controller with a kubeconfig. It checks the cluster through its API
// server with client-go, layer by layer (nodes, kube_system, cni, addons,
// probe), and returns ansible_facts.layercheck_cluster, the cluster.Report.
// With preflight: true it only reads what the lint's cluster rules compare
// with the inventory and returns ansible_facts.layercheck_cluster_state
// (clusterstate.State) for inventory_lint's cluster_state.
// It fails the task only for bad options or an unreadable kubeconfig; the
// role asserts on the facts. In check mode the probes that create objects
// are skipped and say so.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/layercheck/layercheck/module"
	"github.com/layercheck/layercheck/verify/cluster"
)

func main() {
	var req cluster.Request
	os.Exit(module.Run(context.Background(), os.Args, os.Stdout, &req, func(ctx context.Context, args *module.Args) (*module.Result, error) {
		req.CheckMode = args.Internals.CheckMode
		if req.Preflight {
			st, err := cluster.ReadStateRequest(ctx, &req)
			if err != nil {
				return nil, err
			}
			return &module.Result{
				Msg: fmt.Sprintf("read %d nodes, %d control-plane pods (%d API requests to %s)%s",
					len(st.Nodes), len(st.ControlPlane), st.Requests, st.Server, unreadNote(st.Unread)),
				AnsibleFacts: map[string]any{"layercheck_cluster_state": st},
			}, nil
		}
		rep, err := cluster.RunRequest(ctx, &req)
		if err != nil {
			return nil, err
		}
		s := rep.Summary
		return &module.Result{
			Msg: fmt.Sprintf("%s: %d checks, %d ok, %d warn, %d failed, %d skipped, %d errors (%d API requests to %s)",
				rep.Status, s.Total, s.OK, s.Warn, s.Failed, s.Skipped, s.Errored, rep.Requests, rep.Server),
			AnsibleFacts: map[string]any{"layercheck_cluster": rep},
		}, nil
	}))
}

// unreadNote says what the preflight read could not read.
func unreadNote(unread []string) string {
	if len(unread) == 0 {
		return ""
	}
	return fmt.Sprintf("; could not read: %s", strings.Join(unread, "; "))
}
