package collection

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layercheck/layercheck/test/testutil"
)

// adhoc runs `ansible localhost -m layercheck.kubespray.inventory_lint`
// with the checkout as the collection (through playbooks/collections).
func adhoc(t *testing.T, inv, args string, extra ...string) result {
	t.Helper()
	e := env(t, "ANSIBLE_COLLECTIONS_PATH="+testutil.CheckoutCollections(t))
	return run(t, t.TempDir(), e, "ansible", append([]string{"-i", inv, "localhost", "-c", "local",
		"-m", "layercheck.kubespray.inventory_lint", "-a", args}, extra...)...)
}

// The module protocol with the real binary: Ansible writes the arguments
// file, the binary decodes it strictly and answers with one JSON object.
func TestModuleProtocol(t *testing.T) {
	requireBinaries(t)
	inv := inventory(t, true)
	invJSON := `"inventory": ["` + inv + `"]`

	// A wrong type passes the action plugin and is refused by the binary.
	r := adhoc(t, inv, `{`+invJSON+`, "hosts_listed": "ten"}`)
	if r.code == 0 || !strings.Contains(r.out, "option hosts_listed: expected int") {
		t.Errorf("a str for hosts_listed: want the binary's type error (exit %d):\n%s", r.code, r.out)
	}
	// An unknown option is refused before the binary runs.
	r = adhoc(t, inv, `{`+invJSON+`, "colour": "red"}`)
	if r.code == 0 || !strings.Contains(r.out, "Unsupported parameters for (layercheck.kubespray.inventory_lint) module: colour") {
		t.Errorf("unknown option: want a clear error naming it (exit %d):\n%s", r.code, r.out)
	}
	// A missing inventory names the path.
	r = adhoc(t, inv, `{"inventory": ["`+filepath.Join(inv, "nope.ini")+`"]}`)
	if r.code == 0 || !strings.Contains(r.out, "nope.ini") || !strings.Contains(r.out, "cannot read the inventory") {
		t.Errorf("missing inventory: want an error naming the file (exit %d):\n%s", r.code, r.out)
	}

	// One host's facts, with the extra vars Ansible loaded; extra vars are
	// no_log in the invocation, so a secret given with -e is never shown,
	// even with -vvv.
	r = adhoc(t, inv, `{`+invJSON+`, "host": "node2"}`, "-vvv", "-e", "db_password=Hunter2Secret", "-e", `{"download_run_once": "no"}`)
	if r.code != 0 {
		t.Fatalf("host node2 (exit %d):\n%s", r.code, r.out)
	}
	for _, want := range []string{`"layercheck_lint": {`, `"errors": 3`, `download_run_once = \"no\" at -e`,
		`kube_proxy_strict_arp = \"yes\" at host_vars/node2.yml:2:24`, `"extra_vars": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"`} {
		if !strings.Contains(r.out, want) {
			t.Errorf("ad-hoc result lacks %q:\n%s", want, r.out)
		}
	}
	if strings.Contains(r.out, "Hunter2Secret") {
		t.Errorf("an extra var's value was printed:\n%s", r.out)
	}
}

// Vault values are never decrypted nor shown, and no vault password is
// needed to lint an inventory holding them.
func TestVaultValuesStayHidden(t *testing.T) {
	requireBinaries(t)
	inv := inventory(t, false)
	const cipher = "6231623965363538623939313864643934306461383539393139"
	testutil.WriteTree(t, inv, map[string]string{"group_vars/all/vault.yml": "---\nkube_token_secret: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  " + cipher + "\n  3462\n"})
	r := run(t, t.TempDir(), env(t), "ansible-playbook", "-vvv", "-i", inv, lintPlaybook())
	if r.code != 0 {
		t.Fatalf("an inventory with a vault value failed the lint (exit %d):\n%s", r.code, r.out)
	}
	if strings.Contains(r.out, cipher) {
		t.Errorf("vault ciphertext printed:\n%s", r.out)
	}

	// -e @file of a whole-file vault, decrypted by Ansible with the
	// password: its strings are never shown nor judged.
	dir := t.TempDir()
	testutil.WriteTree(t, dir, map[string]string{"pw": "layercheck-test-password\n", "secret.yml": "---\nhelm_enabled: \"true\"\nkube_token: Sup3rS3cretT0ken\n"})
	if r := run(t, dir, env(t), "ansible-vault", "encrypt", "--vault-password-file", "pw", "secret.yml"); r.code != 0 {
		t.Fatalf("ansible-vault encrypt (exit %d):\n%s", r.code, r.out)
	}
	r = run(t, dir, env(t), "ansible-playbook", "-vvv", "-i", inv, "--vault-password-file", "pw", "-e", "@secret.yml", lintPlaybook())
	if r.code != 0 || strings.Contains(r.out, "Sup3rS3cretT0ken") || strings.Contains(r.out, `helm_enabled = \"true\"`) ||
		!strings.Contains(r.out, "strings count as vault values") {
		t.Errorf("a vault-encrypted -e @file: want a pass, a warning, and none of its strings shown (exit %d):\n%s", r.code, r.out)
	}
}

// No binary for the platform: a clear failure saying what to do.
func TestNoBinaryForPlatform(t *testing.T) {
	requireBinaries(t)
	inv := inventory(t, false)
	testutil.WriteTree(t, inv, map[string]string{"host_vars/localhost.yml": "---\nansible_connection: local\nansible_system: Linux\nansible_architecture: ppc64le\n"})
	testutil.WriteTree(t, inv, map[string]string{"local.ini": "localhost\n"})
	r := run(t, t.TempDir(), env(t), "ansible-playbook", "-i", filepath.Join(inv, "inventory.ini"), "-i", filepath.Join(inv, "local.ini"), lintPlaybook())
	if r.code == 0 || !strings.Contains(r.out, "no layercheck binary for linux/ppc64le") || !strings.Contains(r.out, "make modules") {
		t.Errorf("want a failure naming linux/ppc64le and how to build (exit %d):\n%s", r.code, r.out)
	}
}

// Values the inventory files do not show reach the lint through Ansible's
// resolution: group_vars beside a playbook override the inventory's for
// the play. The action plugin passes Ansible's str "true"; the lint judges
// it (an error) and says that Ansible and the file reader disagree (info).
func TestResolvedValuesFromAnsible(t *testing.T) {
	requireBinaries(t)
	inv := inventory(t, false) // helm_enabled: false in group_vars/k8s_cluster/addons.yml
	play := t.TempDir()
	testutil.WriteTree(t, play, map[string]string{
		"group_vars/k8s_cluster.yml": "---\n# beside the playbook, unseen by the inventory reader\nhelm_enabled: \"true\"\n",
		"play.yml":                   "- hosts: all\n  gather_facts: false\n  roles:\n    - layercheck.kubespray.lint\n",
	})
	e := env(t, "ANSIBLE_COLLECTIONS_PATH="+testutil.CheckoutCollections(t))
	r := run(t, play, e, "ansible-playbook", "-i", inv, "play.yml")
	if r.code == 0 {
		t.Fatalf("helm_enabled resolved to a str by Ansible passed the lint:\n%s", r.out)
	}
	for _, want := range []string{"\nstring-as-bool (1): ", `: helm_enabled = "true" (all 3 hosts): helm_enabled is the str "true", not a boolean`,
		"\nINFO\nansible-type-mismatch (1): ", "Ansible resolved helm_enabled to the str \"true\""} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
}

// async: the binary runs under Ansible's async wrapper and its answer
// comes back through async_status.
func TestAsync(t *testing.T) {
	requireBinaries(t)
	inv := inventory(t, true)
	r := adhoc(t, inv, `{"inventory": ["`+inv+`"], "host": "node2"}`, "-B", "60", "-P", "1")
	if r.code != 0 || !strings.Contains(r.out, `"ansible_job_id"`) || !strings.Contains(r.out, `"finished": true`) ||
		!strings.Contains(r.out, `kube_proxy_strict_arp = \"yes\" at host_vars/node2.yml:2:24`) {
		t.Errorf("async run: want the finished job with node2's findings (exit %d):\n%s", r.code, r.out)
	}
}

// ansible-doc from the checkout: playbooks/collections holds
// ansible_collections/layercheck/kubespray (links into the checkout).
func TestDocFromCheckout(t *testing.T) {
	e := env(t, "ANSIBLE_COLLECTIONS_PATH="+testutil.CheckoutCollections(t))
	r := run(t, t.TempDir(), e, "ansible-doc", "layercheck.kubespray.inventory_lint")
	if r.code != 0 {
		t.Fatalf("ansible-doc (exit %d):\n%s", r.code, r.out)
	}
	for _, want := range []string{"inventory_lint.yml", "Reads the inventory sources", "hosts_listed", "EXAMPLES", "RETURN VALUES"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("ansible-doc output lacks %q:\n%s", want, r.out)
		}
	}
	r = run(t, t.TempDir(), e, "ansible-doc", "-t", "role", "layercheck.kubespray.lint")
	if r.code != 0 || !strings.Contains(r.out, "layercheck_lint_hosts_listed") || !strings.Contains(r.out, "layercheck_lint_fail_on_errors") {
		t.Errorf("ansible-doc -t role: want the role's argument spec (exit %d):\n%s", r.code, r.out)
	}
}

// ansible-doc -l lists the three modules and nothing else, without an
// Ansible warning: the per-arch binaries in plugins/bin are not taken for
// modules. The list is read from stdout alone (Ansible's warnings go to
// stderr, and are looked for there): a Python library's own warning on
// stderr says nothing of this collection.
func assertDocList(t *testing.T, e []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Ansible(t, "ansible-doc"), "-l", "layercheck.kubespray")
	cmd.Dir, cmd.Env = t.TempDir(), e
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ansible-doc -l: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	want := []string{"layercheck.kubespray.cluster_facts", "layercheck.kubespray.inventory_lint", "layercheck.kubespray.node_facts"}
	if strings.Join(names, " ") != strings.Join(want, " ") || strings.Contains(stdout.String()+stderr.String(), "[WARNING]") {
		t.Errorf("ansible-doc -l layercheck.kubespray: want exactly %v and no warning, got:\n%s%s", want, stdout.String(), stderr.String())
	}
}

func TestDocListFromCheckout(t *testing.T) {
	requireBinaries(t)
	assertDocList(t, env(t, "ANSIBLE_COLLECTIONS_PATH="+filepath.Join(testutil.RepoRoot(), "playbooks", "collections")))
}
