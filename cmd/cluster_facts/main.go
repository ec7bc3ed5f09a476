// Command cluster_facts is the layercheck.kubespray.cluster_facts Ansible
// module: a binary module run once per cluster by roles/verify, on the first
// kube_control_plane host with /etc/kubernetes/admin.conf (become) or on
// the controller with a kubeconfig. It checks the cluster through its API
// server with client-go, layer by layer (nodes, kube_system, cni, addons,
// probe), and returns ansible_facts.layercheck_cluster, the cluster.Report.
// It fails the task only for bad options or an unreadable kubeconfig; the
// role asserts on the facts. In check mode the probes that create objects
// are skipped and say so.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/layercheck/layercheck/module"
	"github.com/layercheck/layercheck/verify/cluster"
)

func main() {
	var req cluster.Request
	os.Exit(module.Run(context.Background(), os.Args, os.Stdout, &req, func(ctx context.Context, args *module.Args) (*module.Result, error) {
		req.CheckMode = args.Internals.CheckMode
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
