package lint

import (
	"fmt"
	"slices"
)

func init() {
	registerRule("ssh-user-nologin", SeverityError,
		"ansible_user is an account kubespray makes a system user with shell /sbin/nologin (kube, etcd)",
		checkSSHUserNologin)
}

// nologinUsers are the accounts kubespray's adduser role creates, or
// changes, as system users with the shell /sbin/nologin
// (roles/adduser/defaults/main.yml, addusers), and the groups whose hosts
// it runs on: kube through kubernetes/preinstall (k8s_cluster, etcd) and
// etcd (etcd role, kubernetes/control-plane). The names are fixed there,
// not taken from kube_owner.
var nologinUsers = []struct {
	name   string
	groups []string
	roles  string
}{
	{"kube", []string{"k8s_cluster", "kube_control_plane", "kube_node", "etcd"}, "kubernetes/preinstall and etcd"},
	{"etcd", []string{"etcd", "kube_control_plane"}, "etcd and kubernetes/control-plane"},
}

func checkSSHUserNologin(c *checkCtx) []Finding {
	if c.in.Inventory == nil || c.userSetsAddusers() {
		return nil
	}
	var out []Finding
	for _, name := range []string{"ansible_user", "ansible_ssh_user"} {
		for _, u := range c.uses(name) {
			s, ok := strValue(u.judge)
			if !ok {
				continue
			}
			for _, nu := range nologinUsers {
				if s != nu.name {
					continue
				}
				var hosts []string
				for _, g := range nu.groups {
					gh, _ := c.groupHosts(g)
					for _, h := range u.hosts {
						if slices.Contains(gh, h) && !slices.Contains(hosts, h) {
							hosts = append(hosts, h)
						}
					}
				}
				if len(hosts) == 0 {
					continue
				}
				u.hosts = c.inOrder(hosts)
				f := c.finding("ssh-user-nologin", SeverityError, u)
				f.Message = fmt.Sprintf("%s %s is the account kubespray makes a system user with shell /sbin/nologin", name, s)
				f.Why = fmt.Sprintf("kubespray's adduser role (roles/adduser/defaults/main.yml, addusers.%s; run by %s) creates or changes the user %s with shell /sbin/nologin. "+
					"The first cluster.yml gets through on the ssh connections it keeps open (ControlPersist); after that every login as %s runs no command, "+
					"so the next cluster.yml, scale.yml, upgrade-cluster.yml or verify finds these hosts unreachable (\"This account is currently not available.\").", nu.name, nu.roles, s, s)
				f.Fix = fmt.Sprintf("log in as another user with passwordless sudo (%s: ubuntu, debian, admin, ...) and keep ansible_become: true; %s stays kubespray's service account", name, s)
				out = append(out, f)
			}
		}
	}
	return out
}

// userSetsAddusers: an inventory that sets addusers may name other
// accounts or shells; the rule then says nothing.
func (c *checkCtx) userSetsAddusers() bool {
	return len(c.uses("addusers")) > 0
}

// inOrder returns hosts in inventory order.
func (c *checkCtx) inOrder(hosts []string) []string {
	var out []string
	for _, h := range c.hosts {
		if slices.Contains(hosts, h) {
			out = append(out, h)
		}
	}
	return out
}
