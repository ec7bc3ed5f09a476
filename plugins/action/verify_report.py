# Copyright: layercheck authors
# Apache License 2.0 (see LICENSE)
"""Action layercheck.kubespray.verify_report: the verify role's one report.

playbooks/verify.yml ends with two tasks of this action:

* ``scope: play`` (``run_once``): prints the report once, as plain text:
  a table of ``hosts`` x node layers (``ok``, ``warn``, ``fail``,
  ``error``, ``skip``; ``-`` for a layer not run), the cluster layers
  of ``cluster_host`` once, then every failure once (``[FAIL] hosts
  layer check: message`` and ``fix:`` the remedy) — a failure several
  hosts share (same layer, check, message and remedy) is said once with
  its hosts — then warnings the same way, and a one-line summary. It fails
  nothing.
* ``scope: host`` (every host): fails the host it runs on, with one line
  naming its failed layers, when a node layer failed (or, on
  ``cluster_host``, a cluster layer), and prints nothing else; the
  report said what and how to fix.

The facts are read from each host's ``ansible_facts.layercheck_node`` and
``cluster_host``'s ``ansible_facts.layercheck_cluster`` (and
``layercheck_cluster_skipped``, the reason the cluster layers did not run);
they are left as they are. A host without ``layercheck_node`` (unreachable,
or node_facts failed: Ansible printed why) counts as failed.

Options: ``scope`` (``play`` or ``host``, required), ``hosts`` (list of
str: the table's rows; scope play), ``cluster_host`` (str), ``order``
(list of str: the node layers first in the table, in this order),
``fail_on_warn`` (bool, default false: a warning fails too), ``table``
(bool, default true: print the table). With ``-v`` each problem also
shows what was expected and found.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.layercheck.kubespray.plugins.plugin_utils.report import check_options, fail_reported

display = Display()

OPTIONS = frozenset(("scope", "hosts", "cluster_host", "order", "fail_on_warn", "table"))
# verify/cluster's layer order (cluster.LayerOrder).
CLUSTER_ORDER = ("nodes", "kube_system", "cni", "addons", "probe")
CELL = {"skipped": "skip"}
# How many hosts a problem names before it counts the rest (verify.Abridge).
ABRIDGE = 10
# What stands for each host's own name in a problem several hosts share.
HOST_MARK = "<host>"
# Longest expected/found value shown with -v.
DETAIL_CHARS = 300


def _bad(fail_on_warn):
    return ("fail", "error", "warn") if fail_on_warn else ("fail", "error")


def _layers(report):
    layers = report.get("layers") if isinstance(report, Mapping) else None
    return layers if isinstance(layers, Mapping) else {}


def _ordered(layers, order):
    """Layer names: those of order first, in order, then the others sorted."""
    return [n for n in order if n in layers] + sorted(n for n in layers if n not in order)


def failed_layers(report, fail_on_warn):
    """The layers of a node or cluster report whose status fails the host."""
    bad = _bad(fail_on_warn)
    return [n for n, layer in _layers(report).items()
            if isinstance(layer, Mapping) and layer.get("status") in bad]


def inventory_order(hosts, task_vars):
    """hosts in the inventory's order (groups['all']), unknown ones last.

    A play's host list follows the order in which kubespray's dynamic groups
    were filled, which varies from run to run; the report should not.
    """
    index = {}
    for i, h in enumerate((task_vars.get("groups") or {}).get("all") or []):
        index.setdefault(str(h), i)
    return sorted(hosts, key=lambda h: index.get(h, len(index)))


def abridge(hosts):
    if len(hosts) <= ABRIDGE:
        return ", ".join(hosts)
    return "%s and %d more (%d in all)" % (", ".join(hosts[:ABRIDGE]), len(hosts) - ABRIDGE, len(hosts))


def _generic(text, host):
    """text with host's own name (a whole name: no letter or digit around
    it) as HOST_MARK, to compare one host's message with another's."""
    if not host or host not in text:
        return text
    return re.sub(r"(?<![A-Za-z0-9])%s(?![A-Za-z0-9])" % re.escape(host), HOST_MARK, text)


def _detail(value):
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS] + "..."


def _table(rows):
    """Left-aligned columns two spaces apart."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def render(nodes, hosts, cluster, skipped, order, fail_on_warn, table=True, verbose=False):
    """The report's lines and its one-line summary.

    nodes: host -> layercheck_node facts (None when the host has none);
    cluster: layercheck_cluster facts or None, skipped: why there are none.
    """
    lines = []
    cols = []
    for h in hosts:
        for n in _ordered(_layers(nodes.get(h)), order):
            if n not in cols:
                cols.append(n)
    cols = _ordered(dict.fromkeys(cols), order)
    counts = {"ok": 0, "warn": 0, "failed": 0, "no facts": 0}
    rows = [["HOST"] + cols + ["NODE"]]
    for h in hosts:
        rep = nodes.get(h)
        layers = _layers(rep)
        if rep is None:
            counts["no facts"] += 1
            status = "NO FACTS"
        else:
            st = str(rep.get("status") or "error")
            failed = failed_layers(rep, fail_on_warn)
            status = "FAIL" if failed else st.upper()
            counts["failed" if failed else ("warn" if st == "warn" else "ok")] += 1
        cells = []
        for c in cols:
            layer = layers.get(c)
            s = str(layer.get("status")) if isinstance(layer, Mapping) else "-"
            cells.append(CELL.get(s, s))
        rows.append([h] + cells + [status])
    if table:
        lines.extend(_table(rows))
        if cluster is not None:
            clayers = _layers(cluster)
            ccols = _ordered(clayers, CLUSTER_ORDER)
            cst = "FAIL" if failed_layers(cluster, fail_on_warn) else str(cluster.get("status") or "error").upper()
            lines.append("")
            lines.extend(_table([["CLUSTER"] + ccols + ["STATUS"],
                                 [str(cluster.get("server") or "cluster")]
                                 + [CELL.get(str(clayers[c].get("status")), str(clayers[c].get("status"))) for c in ccols]
                                 + [cst]]))
    if cluster is None and skipped:
        lines.extend(["", "cluster layers skipped: %s" % skipped])

    # Problems: each distinct (status, layer, check, message, remedy) once,
    # with the hosts that have it; failures (fail, error) first. A message
    # naming its own host ("... on node1") is compared with that name as
    # HOST, so a failure many hosts share is said once.
    problems = {}
    missing = [h for h in hosts if nodes.get(h) is None]
    for h in hosts:
        rep = nodes.get(h)
        layers = _layers(rep)
        for n in _ordered(layers, order):
            layer = layers[n]
            results = layer.get("results") if isinstance(layer, Mapping) else None
            for r in results if isinstance(results, Sequence) else ():
                if not isinstance(r, Mapping) or r.get("status") not in ("fail", "error", "warn"):
                    continue
                msg, fix = str(r.get("msg") or ""), str(r.get("remediation") or "")
                key = (str(r.get("status")), n, str(r.get("check") or ""), _generic(msg, h), _generic(fix, h))
                p = problems.setdefault(key, {"hosts": [], "result": r, "text": (msg, fix)})
                p["hosts"].append(h)
    if cluster is not None:
        clayers = _layers(cluster)
        for n in _ordered(clayers, CLUSTER_ORDER):
            results = clayers[n].get("results") if isinstance(clayers[n], Mapping) else None
            for r in results if isinstance(results, Sequence) else ():
                if isinstance(r, Mapping) and r.get("status") in ("fail", "error", "warn"):
                    key = (str(r.get("status")), n, str(r.get("check") or ""), str(r.get("msg") or ""),
                           str(r.get("remediation") or ""))
                    problems.setdefault(key, {"hosts": ["cluster"], "result": r, "text": key[3:]})

    def say(key, p):
        status, layer, check, msg, fix = key
        if len(p["hosts"]) == 1:
            msg, fix = p["text"]
        lines.append("")
        lines.append("[%s] %s %s %s: %s" % (status.upper(), abridge(p["hosts"]), layer, check, msg))
        if fix:
            lines.append("    fix: %s" % fix)
        if verbose:
            r = p["result"]
            for label, field in (("expected", "expected"), ("found", "actual")):
                if r.get(field) not in (None, "", [], {}):
                    lines.append("    %s: %s" % (label, _detail(r.get(field))))

    if missing:
        lines.append("")
        lines.append("[FAIL] %s: no layercheck_node facts (the host was unreachable or node_facts failed: see its error above)"
                     % abridge(missing))
    for rank in (("fail", "error"), ("warn",)):
        for key, p in problems.items():
            if key[0] in rank:
                say(key, p)

    nfail = counts["failed"] + counts["no facts"]
    summary = "layercheck verify: %d host%s: %d ok, %d warn, %d failed" % (
        len(hosts), "" if len(hosts) == 1 else "s", counts["ok"], counts["warn"], nfail)
    if cluster is not None:
        cfail = failed_layers(cluster, fail_on_warn)
        summary += "; cluster: %s" % ("FAIL (%s)" % ", ".join(_ordered(dict.fromkeys(cfail), CLUSTER_ORDER)) if cfail
                                      else str(cluster.get("status") or "error").upper())
    elif skipped:
        summary += "; cluster: skipped"
    lines.extend(["", summary])
    return lines, summary


def _facts(task_vars, host, name):
    """ansible_facts[name] of host, from the play's hostvars, or None."""
    facts = _var(task_vars, host, "ansible_facts")
    value = facts.get(name) if isinstance(facts, Mapping) else None
    return value if isinstance(value, Mapping) else None


def _var(task_vars, host, name):
    """Variable name of host (this host's task vars, another's hostvars), or None."""
    if host == task_vars.get("inventory_hostname"):
        return task_vars.get(name)
    hostvars = task_vars.get("hostvars")
    if hostvars is None:
        return None
    try:
        raw = hostvars.raw_get(host)
    except Exception:  # host not in the inventory
        return None
    return raw.get(name) if isinstance(raw, Mapping) else None


def _strings(value, option):
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise AnsibleActionFail("verify_report: option %s must be a list of strings" % option)
    return [str(v) for v in value]


class ActionModule(ActionBase):

    _supports_check_mode = True
    _supports_async = False
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        args = self._task.args
        check_options("verify_report", args, OPTIONS)
        scope = args.get("scope")
        if scope not in ("play", "host"):
            raise AnsibleActionFail("verify_report: option scope must be play or host")
        fail_on_warn = boolean(args.get("fail_on_warn", False), strict=True)
        order = _strings(args.get("order"), "order")
        cluster_host = str(args.get("cluster_host") or "")
        result["changed"] = False

        if scope == "host":
            host = str(task_vars.get("inventory_hostname"))
            node = _facts(task_vars, host, "layercheck_node")
            if node is None:
                msg = "layercheck: %s has no layercheck_node facts" % host
                return fail_reported(result, msg)
            failed = _ordered(dict.fromkeys(failed_layers(node, fail_on_warn)), order)
            what = []
            if failed:
                what.append("node layer(s) %s" % ", ".join(failed))
            if host == cluster_host:
                cfail = failed_layers(_facts(task_vars, host, "layercheck_cluster"), fail_on_warn)
                if cfail:
                    what.append("cluster layer(s) %s" % ", ".join(_ordered(dict.fromkeys(cfail), CLUSTER_ORDER)))
            if what:
                return fail_reported(result, "layercheck: %s failed %s; the report above says what is wrong and how to fix it"
                                     % (host, " and ".join(what)))
            result["msg"] = "layercheck: %s passed" % host
            return result

        hosts = inventory_order(_strings(args.get("hosts"), "hosts"), task_vars)
        nodes = {h: _facts(task_vars, h, "layercheck_node") for h in hosts}
        cluster = _facts(task_vars, cluster_host, "layercheck_cluster") if cluster_host else None
        skipped = str(_var(task_vars, cluster_host, "layercheck_cluster_skipped") or "") if cluster_host else ""
        lines, summary = render(nodes, hosts, cluster, skipped, order, fail_on_warn,
                                table=boolean(args.get("table", True), strict=True),
                                verbose=display.verbosity >= 1)
        display.display("\n".join(lines))
        result["msg"] = summary
        return result
