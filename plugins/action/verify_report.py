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

The report and the verdicts are drawn by the ``layercheck`` binary the
collection ships for the controller (``plugins/bin/layercheck_<os>_<arch>``,
``layercheck report``): this action checks the options, hands it the facts
as JSON on its standard input, prints what it answers and fails the host
when it says so. A controller without a matching binary is an error that
says how to get one.

The facts are read from each host's ``ansible_facts.layercheck_node`` and
``cluster_host``'s ``ansible_facts.layercheck_cluster`` (and
``layercheck_cluster_skipped``, the reason the cluster layers did not run);
they are left as they are. A host without ``layercheck_node`` (unreachable,
or node_facts failed) counts as failed.

Options: ``scope`` (``play`` or ``host``, required), ``hosts`` (list of
str: the table's rows; scope play), ``cluster_host`` (str), ``order``
(list of str: the node layers first in the table, in this order),
``fail_on_warn`` (bool, default false: a warning fails too), ``table``
(bool, default true: print the table). With ``-v`` each problem also
shows what was expected and found.
"""
from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence

from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.layercheck.kubespray.plugins.plugin_utils.binary_module import controller_binary
from ansible_collections.layercheck.kubespray.plugins.plugin_utils.report import check_options, fail_reported

display = Display()

OPTIONS = frozenset(("scope", "hosts", "cluster_host", "order", "fail_on_warn", "table"))


def _facts(task_vars, host, name):
    """ansible_facts[name] of host, from the play's hostvars, or None; each
    layer's own facts (certificates, members, ...) left out: the report
    reads the layers' statuses and results only."""
    facts = _var(task_vars, host, "ansible_facts")
    value = facts.get(name) if isinstance(facts, Mapping) else None
    if not isinstance(value, Mapping):
        return None
    layers = value.get("layers")
    if not isinstance(layers, Mapping):
        return value
    value = dict(value)
    value["layers"] = {n: {k: v for k, v in layer.items() if k != "facts"} if isinstance(layer, Mapping) else layer
                       for n, layer in layers.items()}
    return value


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


def _report(request):
    """What ``layercheck report`` answers to request: text, msg, failed."""
    binary = controller_binary("layercheck", "verify_report")
    try:
        proc = subprocess.run([binary, "report"], input=json.dumps(request, default=str).encode(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    except OSError as e:
        raise AnsibleActionFail("verify_report: cannot run %s: %s" % (binary, e))
    if proc.returncode != 0:
        raise AnsibleActionFail("verify_report: %s report failed (exit %d): %s"
                                % (binary, proc.returncode, proc.stderr.decode(errors="replace").strip()))
    try:
        answer = json.loads(proc.stdout)
    except ValueError as e:
        raise AnsibleActionFail("verify_report: %s report answered no JSON: %s" % (binary, e))
    if not isinstance(answer, Mapping) or not isinstance(answer.get("msg"), str):
        raise AnsibleActionFail("verify_report: %s report answered no msg" % binary)
    return answer


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
            answer = _report({
                "scope": "host", "hosts": [host], "nodes": {host: _facts(task_vars, host, "layercheck_node")},
                "cluster_host": cluster_host,
                "cluster": _facts(task_vars, host, "layercheck_cluster") if host == cluster_host else None,
                "order": order, "fail_on_warn": fail_on_warn,
            })
            if answer.get("failed"):
                return fail_reported(result, answer["msg"])
            result["msg"] = answer["msg"]
            return result

        hosts = _strings(args.get("hosts"), "hosts")
        table = boolean(args.get("table", True), strict=True)
        answer = _report({
            "scope": "play", "hosts": hosts,
            # The rows follow the inventory: a play's host list follows the
            # order kubespray's dynamic groups were filled, which varies.
            "inventory": [str(h) for h in (task_vars.get("groups") or {}).get("all") or []],
            "nodes": {h: _facts(task_vars, h, "layercheck_node") for h in hosts},
            "cluster_host": cluster_host,
            "cluster": _facts(task_vars, cluster_host, "layercheck_cluster") if cluster_host else None,
            "cluster_skipped": str(_var(task_vars, cluster_host, "layercheck_cluster_skipped") or "") if cluster_host else "",
            "order": order, "fail_on_warn": fail_on_warn, "table": table,
            "verbose": display.verbosity >= 1,
        })
        display.display(str(answer.get("text") or ""))
        result["msg"] = answer["msg"]
        return result
