package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layercheck/layercheck/test/harness"
	"github.com/layercheck/layercheck/verify"
)

// The lines of kubespray's k8s-certs-renew.sh.j2 the layer tells the
// releases apart by (v2.29.1 to v2.31.0, and master's fix).
const (
	renewScriptV231  = "#!/bin/bash\nnext_time=$(systemctl show k8s-certs-renew.timer  -p NextElapseUSecRealtime --value)\n/usr/local/bin/kubeadm certs renew all\n"
	renewScriptFixed = "#!/bin/bash\n# systemctl show reports an empty NextElapseUSecRealtime while the timer's unit is\n" +
		"next_time=$(LC_ALL=C systemd-analyze calendar \"Mon *-*-1,2,3,4,5,6,7 03:00:00\" | grep -oP 'Next elapse:\\s*\\K.*\\S')\n/usr/local/bin/kubeadm certs renew all\n"
	renewTimerUnit = "[Unit]\nDescription=Timer to renew K8S control plane certificates\n\n[Timer]\nOnCalendar=Mon *-*-1,2,3,4,5,6,7 03:00:00\nRandomizedDelaySec=10min\nFixedRandomDelay=yes\nPersistent=yes\n\n[Install]\nWantedBy=multi-user.target\n"
)

// timerProps is `systemctl show k8s-certs-renew.timer` for a timer that is
// enabled and waits for its next run, with changes.
func timerProps(change map[string]string) map[string]string {
	p := map[string]string{
		"Id": CertsRenewTimer, "LoadState": "loaded", "ActiveState": "active", "SubState": "waiting",
		"UnitFileState": "enabled", "FragmentPath": "/etc/systemd/system/k8s-certs-renew.timer",
		"NextElapseUSecRealtime": "Mon 2026-12-07 03:04:12 UTC", "LastTriggerUSec": "Mon 2026-11-02 03:04:12 UTC",
	}
	for k, v := range change {
		p[k] = v
	}
	return p
}

// countingSystemd is a fakeSystemd that records the units asked for.
type countingSystemd struct {
	fakeSystemd
	asked []string
}

func (c *countingSystemd) Show(ctx context.Context, unit string) (map[string]string, error) {
	c.asked = append(c.asked, unit)
	return c.fakeSystemd.Show(ctx, unit)
}

// renewTree is the healthy control-plane tree with kubespray's renewal
// script and timer unit, as auto_renew_certificates: true leaves them.
func renewTree(t *testing.T, script string) *harness.Tree {
	t.Helper()
	tr := buildTree(t, harness.Config{})
	if script != "" {
		must(t, tr.WriteFile("/usr/local/bin/k8s-certs-renew.sh", []byte(script), 0o755))
	}
	must(t, tr.WriteFile("/etc/systemd/system/k8s-certs-renew.timer", []byte(renewTimerUnit), 0o644))
	return tr
}

func renewResults(res []verify.Result) []verify.Result {
	var out []verify.Result
	for _, r := range res {
		if strings.HasPrefix(r.Check, "renew_") || strings.HasSuffix(r.Check, "/k8s-certs-renew.sh") {
			out = append(out, r)
		}
	}
	return out
}

func TestCertificatesAutoRenewTimer(t *testing.T) {
	const timerCheck = "renew_timer:k8s-certs-renew.timer"
	for _, tc := range []struct {
		name     string
		sd       verify.Systemd
		status   verify.Status
		msg      []string
		fix      []string
		noFixFor string // a word the remedy must not hold
	}{
		{"waiting for its next run", fakeSystemd{CertsRenewTimer: timerProps(nil)}, verify.StatusOK,
			[]string{"enabled and active on node1", "next run Mon 2026-12-07 03:04:12 UTC", "last run Mon 2026-11-02 03:04:12 UTC"}, nil, ""},
		{"never run yet", fakeSystemd{CertsRenewTimer: timerProps(map[string]string{"LastTriggerUSec": ""})}, verify.StatusOK,
			[]string{"next run Mon 2026-12-07 03:04:12 UTC (last run never)"}, nil, ""},
		// kubespray #13072: an active timer without a next run.
		{"no next run", fakeSystemd{CertsRenewTimer: timerProps(map[string]string{"NextElapseUSecRealtime": "", "SubState": "elapsed"})}, verify.StatusFail,
			[]string{"active but has no next run", "NextElapseUSecRealtime is empty", "SubState=elapsed",
				"OnCalendar=Mon *-*-1,2,3,4,5,6,7 03:00:00 (auto_renew_certificates_systemd_calendar)", "never elapses again", "#13072"},
			[]string{"auto_renew_certificates_systemd_calendar", "systemd-analyze calendar", "cluster.yml --tags control-plane", "--tags master", "systemctl list-timers k8s-certs-renew.timer"}, ""},
		// While the service runs systemd gives no next run either: not a
		// broken calendar.
		{"renewal running now", fakeSystemd{CertsRenewTimer: timerProps(map[string]string{"NextElapseUSecRealtime": "", "SubState": "running"})}, verify.StatusWarn,
			[]string{"running its renewal now", "next run is not known yet"}, []string{"systemctl status k8s-certs-renew.service"}, ""},
		{"not installed", fakeSystemd{}, verify.StatusFail,
			[]string{"k8s-certs-renew.timer is not installed on node1 (LoadState=not-found) although auto_renew_certificates is true"},
			[]string{"cluster.yml --tags control-plane", "auto_renew_certificates: true"}, ""},
		{"inactive and disabled", fakeSystemd{CertsRenewTimer: timerProps(map[string]string{"ActiveState": "inactive", "SubState": "dead", "UnitFileState": "disabled", "NextElapseUSecRealtime": ""})}, verify.StatusFail,
			[]string{"UnitFileState=disabled (want enabled", "ActiveState=inactive (want active"},
			[]string{"systemctl enable --now k8s-certs-renew.timer", "auto_renew_certificates: true"}, ""},
		{"failed", fakeSystemd{CertsRenewTimer: timerProps(map[string]string{"ActiveState": "failed", "SubState": "failed", "NextElapseUSecRealtime": ""})}, verify.StatusFail,
			[]string{"ActiveState=failed (want active"}, []string{"systemctl enable --now k8s-certs-renew.timer"}, "UnitFileState"},
		{"calendar systemd rejects", fakeSystemd{CertsRenewTimer: timerProps(map[string]string{"LoadState": "bad-setting", "ActiveState": "inactive", "NextElapseUSecRealtime": ""})}, verify.StatusFail,
			[]string{"does not load (LoadState=bad-setting)", "OnCalendar=Mon *-*-1,2,3,4,5,6,7 03:00:00"},
			[]string{"systemctl status k8s-certs-renew.timer", "auto_renew_certificates_systemd_calendar", "systemd-analyze calendar"}, ""},
		{"no systemd", nil, verify.StatusWarn, []string{"systemd is not read on node1", "not checked although auto_renew_certificates is true"}, nil, ""},
		{"systemctl absent", errSystemd{fmt.Errorf("%w: systemctl not found", verify.ErrNoSystemd)}, verify.StatusWarn, []string{"systemd is not available"}, nil, ""},
		{"systemctl fails", errSystemd{fmt.Errorf("command \"systemctl show\" failed: exit status 1: Access denied")}, verify.StatusError, []string{"Access denied"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(renewTree(t, renewScriptFixed), testNow)
			env.Options.AutoRenewCertificates = true
			env.Systemd = tc.sd
			res, f := runCerts(t, env)
			r, ok := certResult(res, timerCheck)
			require.True(t, ok, "no %s result in %s", timerCheck, etcdDump(res))
			assert.Equal(t, tc.status, r.Status, r.Msg)
			for _, m := range tc.msg {
				assert.Contains(t, r.Msg, m)
			}
			for _, fx := range tc.fix {
				assert.Contains(t, r.Remediation, fx)
			}
			if tc.noFixFor != "" {
				assert.NotContains(t, r.Msg, tc.noFixFor)
			}
			if r.Status == verify.StatusFail {
				assert.NotEmpty(t, r.Remediation)
			}
			// The script is there and is the fixed one; the certificates are healthy.
			s, ok := certResult(res, "renew_script:/usr/local/bin/k8s-certs-renew.sh")
			require.True(t, ok)
			assert.Equal(t, verify.StatusOK, s.Status, s.Msg)
			for _, x := range res {
				if x.Check != timerCheck {
					assert.NotContains(t, []verify.Status{verify.StatusFail, verify.StatusError}, x.Status, "%s: %s", x.Check, x.Msg)
				}
			}
			require.NotNil(t, f.AutoRenew)
			assert.Equal(t, "/usr/local/bin/k8s-certs-renew.sh", f.AutoRenew.Script)
			assert.True(t, f.AutoRenew.ScriptPresent)
			if fs, ok := tc.sd.(fakeSystemd); ok && fs[CertsRenewTimer] != nil {
				assert.Equal(t, fs[CertsRenewTimer]["NextElapseUSecRealtime"], f.AutoRenew.NextElapse)
				assert.Equal(t, "Mon *-*-1,2,3,4,5,6,7 03:00:00", f.AutoRenew.OnCalendar)
			}
		})
	}
}

type errSystemd struct{ err error }

func (e errSystemd) Show(context.Context, string) (map[string]string, error) { return nil, e.err }

// The script: missing is a failure; kubespray v2.29.1 to v2.31.0's, which
// renews on every run (#13072), a warning; master's is ok.
func TestCertificatesAutoRenewScript(t *testing.T) {
	const script = "/usr/local/bin/k8s-certs-renew.sh"
	sd := fakeSystemd{CertsRenewTimer: timerProps(nil)}
	t.Run("missing", func(t *testing.T) {
		env := testEnv(renewTree(t, ""), testNow)
		env.Options.AutoRenewCertificates, env.Systemd = true, sd
		res, f := runCerts(t, env)
		r, ok := certResult(res, "present:"+script)
		require.True(t, ok, etcdDump(res))
		assert.Equal(t, verify.StatusFail, r.Status)
		assert.Contains(t, r.Msg, script+" is missing on node1")
		assert.Contains(t, r.Remediation, "cluster.yml --tags control-plane")
		assert.Contains(t, r.Remediation, "bin_dir")
		assert.Contains(t, f.Missing, script)
		assert.False(t, f.AutoRenew.ScriptPresent)
		_, ok = certResult(res, "renew_script:"+script)
		assert.False(t, ok)
	})
	t.Run("renews on every run", func(t *testing.T) {
		env := testEnv(renewTree(t, renewScriptV231), testNow)
		env.Options.AutoRenewCertificates, env.Systemd = true, sd
		res, _ := runCerts(t, env)
		r, ok := certResult(res, "renew_script:"+script)
		require.True(t, ok, etcdDump(res))
		assert.Equal(t, verify.StatusWarn, r.Status)
		for _, m := range []string{"NextElapseUSecRealtime", "renews every kubeadm certificate and restarts the control-plane pods on every run", "#13072"} {
			assert.Contains(t, r.Msg, m)
		}
		assert.Contains(t, r.Remediation, "auto_renew_certificates_systemd_calendar")
	})
	t.Run("bin_dir", func(t *testing.T) {
		tr := renewTree(t, "")
		must(t, tr.WriteFile("/opt/bin/k8s-certs-renew.sh", []byte(renewScriptFixed), 0o755))
		env := testEnv(tr, testNow)
		env.Options.AutoRenewCertificates, env.Options.BinDir, env.Systemd = true, "/opt/bin", sd
		res, _ := runCerts(t, env)
		r, ok := certResult(res, "renew_script:/opt/bin/k8s-certs-renew.sh")
		require.True(t, ok, etcdDump(res))
		assert.Equal(t, verify.StatusOK, r.Status)
	})
}

// Nothing is checked, nor systemd asked, when auto_renew_certificates is
// false (kubespray's default), on a host outside kube_control_plane, or
// where kubespray's control-plane role has not run.
func TestCertificatesAutoRenewNotChecked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		on     bool
		groups []string
		bare   bool
	}{
		{"auto_renew_certificates false", false, []string{"etcd", "kube_control_plane", "k8s_cluster"}, false},
		{"worker", true, []string{"kube_node", "k8s_cluster"}, false},
		{"etcd only", true, []string{"etcd"}, false},
		{"control-plane role not run", true, []string{"kube_control_plane", "k8s_cluster"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := renewTree(t, renewScriptV231)
			if tc.bare {
				for _, p := range roleControlPlane.Marks(testEnv(tr, testNow).Options) {
					if err := tr.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
						t.Fatal(err)
					}
				}
			}
			env := testEnv(tr, testNow)
			env.Options.AutoRenewCertificates, env.Options.Groups = tc.on, tc.groups
			sd := &countingSystemd{fakeSystemd: fakeSystemd{}}
			env.Systemd = sd
			res, f := runCerts(t, env)
			assert.Empty(t, renewResults(res), etcdDump(res))
			assert.Nil(t, f.AutoRenew)
			assert.Empty(t, sd.asked, "systemd asked")
		})
	}
}

// A kubeadm certificate that expires in 20 days is a warning (below
// cert_warn_days, 30; not below cert_fail_days, 7): on the certificate,
// its family's result and with kubeadm's renew command as the remedy.
func TestCertificatesKubeadmExpiresIn20Days(t *testing.T) {
	tr := buildTree(t, harness.Config{})
	const p = "/etc/kubernetes/ssl/apiserver.crt"
	must(t, tr.ReissueLeaf(p, testNow.Add(-345*24*time.Hour), testNow.Add(20*24*time.Hour), nil))
	res, f := runCerts(t, testEnv(tr, testNow))
	c := findCert(f, p)
	require.NotNil(t, c)
	assert.Equal(t, 20, c.DaysLeft)
	assert.Equal(t, verify.StatusWarn, c.Status)
	r, ok := certResult(res, "certificate:"+p)
	require.True(t, ok, etcdDump(res))
	assert.Equal(t, verify.StatusWarn, r.Status)
	assert.Contains(t, r.Msg, "expires on 2026-12-20T14:22:06Z, in 20 days (warn below 30)")
	assert.Contains(t, r.Remediation, "kubeadm certs renew apiserver")
	assert.Contains(t, r.Remediation, "auto_renew_certificates: true")
	fam, ok := certResult(res, "family/"+FamilyKubeadm)
	require.True(t, ok)
	assert.Equal(t, verify.StatusWarn, fam.Status)
	assert.Contains(t, fam.Msg, "("+p+", 20 days left)")
	assert.Empty(t, failed(res))
}
