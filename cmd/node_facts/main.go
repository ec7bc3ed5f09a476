// Command node_facts is the layercheck.kubespray.node_facts Ansible module:
// a binary module run on every node by roles/verify (become: true). It
// checks the node layer by layer (certificates, install records, kubelet,
// etcd, DNS, CNI, add-ons) and returns ansible_facts.layercheck_node, the
// node.Report. It only reads, so check mode gives the same facts; it
// never fails the task for a failed check (the role asserts on the facts),
// only for bad options.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/layercheck/layercheck/module"
	"github.com/layercheck/layercheck/verify/node"
)

func main() {
	req := node.Request{Options: node.NewOptions()}
	os.Exit(module.Run(context.Background(), os.Args, os.Stdout, &req, func(ctx context.Context, args *module.Args) (*module.Result, error) {
		rep, err := node.RunRequest(ctx, &req)
		if err != nil {
			return nil, err
		}
		s := rep.Summary
		return &module.Result{
			Msg: fmt.Sprintf("%s: %d checks, %d ok, %d warn, %d failed, %d skipped, %d errors",
				rep.Status, s.Total, s.OK, s.Warn, s.Failed, s.Skipped, s.Errored),
			AnsibleFacts: map[string]any{"layercheck_node": rep},
		}, nil
	}))
}
