package app

import "fmt"

// clusterFromFlag declares --cluster-from, which lint and verify share: the
// cluster is read with admin.conf of the first kube_control_plane host, over
// that host's SSH connection, instead of with --kubeconfig. help says what
// the command does with it. check, called once the options are parsed, says
// what is wrong with the value or with --kubeconfig given beside it ("" when
// nothing is); each command words that as its other usage errors.
func clusterFromFlag(fs *cmdFlags, kubeconfig *string, help string) (clusterFrom *string, check func() string) {
	clusterFrom = new(string)
	fs.str(clusterFrom, "", "cluster-from", "first-control-plane", "", help)
	return clusterFrom, func() string {
		switch {
		case *clusterFrom != "" && *clusterFrom != "first-control-plane":
			return fmt.Sprintf("--cluster-from %q: want first-control-plane", *clusterFrom)
		case *clusterFrom != "" && *kubeconfig != "":
			return "give --kubeconfig or --cluster-from, not both"
		}
		return ""
	}
}
