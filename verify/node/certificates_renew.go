package node

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/layercheck/layercheck/verify"
)

// With auto_renew_certificates: true, kubespray's
// roles/kubernetes/control-plane (tasks/main.yml, "Renew K8S control plane
// certificates monthly 1/2 and 2/2") installs k8s-certs-renew.service and
// k8s-certs-renew.timer in /etc/systemd/system on kube_control_plane hosts
// and enables and starts the timer; the service runs
// bin_dir/k8s-certs-renew.sh ("Install script to renew K8S control plane
// certificates", installed whatever the variable says). The script runs
// `kubeadm certs renew all` and restarts the control-plane pods. The units
// are the same in v2.24.3 to master; the script is not:
//
//   - v2.24.3 to v2.28.1: renews on every run, by design (the timer's
//     calendar is the renewal period).
//   - v2.29.1 to v2.31.0: renews only certificates that would expire before
//     the next run (+7 days), reading the next run from
//     `systemctl show k8s-certs-renew.timer -p NextElapseUSecRealtime`; but
//     systemd reports that empty while the timer's own service runs, so the
//     script takes its "renew directly" branch on every run: kubespray
//     #13072, the control plane restarted every month.
//   - master: asks `systemd-analyze calendar` for the next run instead.
//
// The timer's unit file is rendered from
// auto_renew_certificates_systemd_calendar (OnCalendar=); the layer reads
// the unit file on the node rather than the inventory's value, so it
// reports what systemd runs.

// Names kubespray gives the renewal units and script.
const (
	CertsRenewTimer  = "k8s-certs-renew.timer"
	CertsRenewScript = "k8s-certs-renew.sh"
	// certsRenewTimerFile is where kubespray writes the timer's unit.
	certsRenewTimerFile = "/etc/systemd/system/" + CertsRenewTimer
)

// AutoRenewFacts are what auto_renew_certificates installs on a
// kube_control_plane host, as found there.
type AutoRenewFacts struct {
	// Timer is `systemctl show k8s-certs-renew.timer` (nil when not read).
	Timer map[string]string `json:"timer,omitempty"`
	// OnCalendar is the timer unit file's OnCalendar= (kubespray's
	// auto_renew_certificates_systemd_calendar).
	OnCalendar string `json:"on_calendar,omitempty"`
	// NextElapse and LastTrigger are the timer's next and last run as
	// systemctl prints them (local time); empty when there is none.
	NextElapse  string `json:"next_elapse"`
	LastTrigger string `json:"last_trigger"`
	// Script is bin_dir/k8s-certs-renew.sh; ScriptPresent whether it is there.
	Script        string `json:"script"`
	ScriptPresent bool   `json:"script_present"`
}

// certsRenewFix is how to (re)install the units and script: the
// control-plane role's tag is control-plane from kubespray v2.29.1 on,
// master before.
const certsRenewFix = "re-run `ansible-playbook -i <inventory> cluster.yml --tags control-plane` (kubespray v2.28 and older: --tags master) with auto_renew_certificates: true, which installs k8s-certs-renew.service, k8s-certs-renew.timer and bin_dir/k8s-certs-renew.sh and enables and starts the timer"

// certsAutoRenew checks, when auto_renew_certificates is true, on a
// kube_control_plane host where kubespray's control-plane role has run,
// that k8s-certs-renew.timer is loaded, enabled, active and has a next run,
// and that its script is there. Otherwise it checks nothing (nil facts).
func certsAutoRenew(ctx context.Context, env *Env, f *CertificatesFacts, add func(verify.Result)) {
	o := env.Options
	if !o.AutoRenewCertificates || !o.InGroup("kube_control_plane") || !roleRan(env, roleControlPlane) {
		return
	}
	host := hostName(env)
	ar := &AutoRenewFacts{Script: path.Join(o.BinDir, CertsRenewScript)}
	f.AutoRenew = ar

	// The script.
	if data, err := env.Read(ar.Script); err != nil {
		f.Missing = append(f.Missing, ar.Script)
		add(verify.Result{Check: "present:" + ar.Script, Status: verify.StatusFail,
			Msg:         fmt.Sprintf("%s is missing on %s (auto_renew_certificates is true: k8s-certs-renew.service runs it): %v", ar.Script, host, verify.PathErr(err)),
			Expected:    ar.Script,
			Remediation: certsRenewFix + "; check that bin_dir is the inventory's (" + o.BinDir + ")"})
	} else {
		ar.ScriptPresent = true
		add(certsRenewScriptResult(ar.Script, string(data), host))
	}

	// The timer.
	check := "renew_timer:" + CertsRenewTimer
	if env.Systemd == nil {
		add(verify.Result{Check: check, Status: verify.StatusWarn,
			Msg:         fmt.Sprintf("systemd is not read on %s (no systemctl, not booted with systemd, or a fixture root): %s not checked although auto_renew_certificates is true", host, CertsRenewTimer),
			Remediation: "run the node check on the control-plane host itself (root /), where kubespray installs " + CertsRenewTimer})
		return
	}
	timeout := env.NetTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	props, err := env.Systemd.Show(sctx, CertsRenewTimer)
	if err != nil {
		st := verify.StatusError
		if errors.Is(err, verify.ErrNoSystemd) {
			st = verify.StatusWarn
		}
		add(verify.Result{Check: check, Status: st, Msg: fmt.Sprintf("%s on %s: %v", CertsRenewTimer, host, err),
			Remediation: "on " + host + ": `systemctl status " + CertsRenewTimer + "`"})
		return
	}
	ar.Timer = props
	ar.NextElapse, ar.LastTrigger = props["NextElapseUSecRealtime"], props["LastTriggerUSec"]
	unitFile := props["FragmentPath"]
	if unitFile == "" {
		unitFile = certsRenewTimerFile
	}
	if data, err := env.Read(unitFile); err == nil {
		ar.OnCalendar = onCalendar(string(data))
	}
	add(certsRenewTimerResult(check, props, ar, host))
}

// certsRenewTimerResult judges `systemctl show k8s-certs-renew.timer`.
func certsRenewTimerResult(check string, props map[string]string, ar *AutoRenewFacts, host string) verify.Result {
	enableNow := "on " + host + ": `systemctl enable --now " + CertsRenewTimer + "` (or " + certsRenewFix + ")"
	cal := "auto_renew_certificates_systemd_calendar"
	if ar.OnCalendar != "" {
		cal = fmt.Sprintf("OnCalendar=%s (auto_renew_certificates_systemd_calendar)", ar.OnCalendar)
	}
	calendarFix := fmt.Sprintf("set auto_renew_certificates_systemd_calendar to a calendar for which `systemd-analyze calendar '<calendar>'` prints a \"Next elapse\" (kubespray's default %q is the first Monday of each month) and %s; `systemctl list-timers %s` then shows the next run",
		"Mon *-*-1,2,3,4,5,6,7 03:00:00", certsRenewFix, CertsRenewTimer)
	want := map[string]string{"LoadState": "loaded", "UnitFileState": "enabled", "ActiveState": "active", "NextElapseUSecRealtime": "a time"}
	fail := func(msg, fix string) verify.Result {
		return verify.Result{Check: check, Status: verify.StatusFail, Msg: msg, Expected: want, Actual: props, Remediation: fix}
	}
	switch ls := props["LoadState"]; {
	case ls == "not-found":
		return fail(fmt.Sprintf("%s is not installed on %s (LoadState=not-found) although auto_renew_certificates is true: the control-plane certificates are not renewed before they expire (kubeadm's last a year)", CertsRenewTimer, host), certsRenewFix)
	case ls != "loaded":
		return fail(fmt.Sprintf("%s on %s does not load (LoadState=%s): systemd rejected the unit, e.g. an OnCalendar= it cannot parse (%s)", CertsRenewTimer, host, etcdOr(ls, `""`), cal),
			"`systemctl status "+CertsRenewTimer+"` on "+host+" says why; "+calendarFix)
	}
	var probs []string
	if s := props["UnitFileState"]; s != "enabled" {
		probs = append(probs, fmt.Sprintf("UnitFileState=%s (want enabled: it would not start at boot)", etcdOr(s, `""`)))
	}
	if s := props["ActiveState"]; s != "active" {
		probs = append(probs, fmt.Sprintf("ActiveState=%s (want active: it does not fire)", etcdOr(s, `""`)))
	}
	if len(probs) > 0 {
		return fail(fmt.Sprintf("%s on %s is not running as auto_renew_certificates wants: %s", CertsRenewTimer, host, strings.Join(probs, ", ")), enableNow)
	}
	last := ar.LastTrigger
	if last == "" {
		last = "never"
	}
	if ar.NextElapse == "" {
		if props["SubState"] == "running" {
			// systemd reports no next run while the timer's service runs
			// (the state kubespray #13072 found the script in).
			return verify.Result{Check: check, Status: verify.StatusWarn,
				Msg:         fmt.Sprintf("%s on %s is running its renewal now (SubState=running; systemd gives no next run while k8s-certs-renew.service runs): its next run is not known yet", CertsRenewTimer, host),
				Actual:      props,
				Remediation: "check again when `systemctl status k8s-certs-renew.service` on " + host + " shows it has finished"}
		}
		return fail(fmt.Sprintf("%s on %s is active but has no next run (NextElapseUSecRealtime is empty, SubState=%s; last run %s): its %s never elapses again, so the control-plane certificates are not renewed (kubespray #13072's symptom)",
			CertsRenewTimer, host, etcdOr(props["SubState"], `""`), last, cal), calendarFix)
	}
	return verify.Result{Check: check, Status: verify.StatusOK,
		Msg: fmt.Sprintf("%s is enabled and active on %s; next run %s (last run %s)", CertsRenewTimer, host, ar.NextElapse, last)}
}

// certsRenewScriptResult judges the installed k8s-certs-renew.sh: the
// v2.29.1 to v2.31.0 script, which reads the timer's next run during its
// own run, renews and restarts the control plane on every run (#13072).
func certsRenewScriptResult(script, data, host string) verify.Result {
	check := "renew_script:" + script
	if strings.Contains(data, "NextElapseUSecRealtime") && !strings.Contains(data, "systemd-analyze calendar") {
		return verify.Result{Check: check, Status: verify.StatusWarn,
			Msg: fmt.Sprintf("%s on %s reads the timer's next run with `systemctl show %s -p NextElapseUSecRealtime` while the timer's own service runs, when systemd reports it empty: it then skips its expiry check, renews every kubeadm certificate and restarts the control-plane pods on every run (kubespray v2.29.1 to v2.31.0, kubespray #13072)",
				script, host, CertsRenewTimer),
			Remediation: "kubespray's master branch fixed the script after v2.31.0 (it asks `systemd-analyze calendar` for the next run); until the kubespray release you run has the fix, expect a control-plane restart at every run of " + CertsRenewTimer + ", or set auto_renew_certificates_systemd_calendar to a rarer calendar (kubeadm's certificates last a year) and re-run cluster.yml --tags control-plane"}
	}
	return verify.Result{Check: check, Status: verify.StatusOK, Msg: fmt.Sprintf("%s is present on %s", script, host)}
}

// onCalendar returns the OnCalendar= values of a timer unit file ("; "
// between several).
func onCalendar(unit string) string {
	var out []string
	for _, line := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "OnCalendar="); ok {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return strings.Join(out, "; ")
}
