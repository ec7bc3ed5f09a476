# Copyright: layercheck authors
# Apache License 2.0 (see LICENSE)
"""Action layercheck.kubespray.lint_report: the lint role's one report.

The lint role registers the result of layercheck.kubespray.inventory_lint
(run once for the play) and hands it here as ``result``. This action prints
the report once, as plain text straight to the output: ``text`` (the
findings grouped by severity and rule, each on one or two lines; each
finding's why from ``-v`` on) when there is something to say, else the
one-line ``summary`` (the counts and the catalogue). With errors and
``fail_on_errors`` it then fails with a one-line message: the findings are
not repeated in the failure, and the failure shows no task source (the
role's task files are no business of the operator).

Options: ``result`` (dict, required), ``fail_on_errors`` (bool, default
true), ``show_warnings`` (bool, default true: print warning and info
findings when there is no error).
"""
from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.layercheck.kubespray.plugins.plugin_utils.report import check_options, fail_reported

display = Display()

OPTIONS = frozenset(("result", "fail_on_errors", "show_warnings"))


class ActionModule(ActionBase):

    _supports_check_mode = True
    _supports_async = False
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        args = self._task.args
        check_options("lint_report", args, OPTIONS)
        run = args.get("result")
        if not isinstance(run, dict) or not isinstance(run.get("report"), dict):
            raise AnsibleActionFail("lint_report: option result must be the registered result of layercheck.kubespray.inventory_lint")
        fail = boolean(args.get("fail_on_errors", True), strict=True)
        show = boolean(args.get("show_warnings", True), strict=True)
        report = run["report"]
        errors = int(report.get("errors") or 0)
        findings = report.get("findings") or []
        summary = str(run.get("summary") or "layercheck lint: %d errors" % errors)
        text = str(run.get("text") or summary)
        if errors or (findings and show):
            display.display(text)
        else:
            display.display(summary)
        result.update(changed=False, msg=summary, errors=errors, warnings=int(report.get("warnings") or 0))
        if errors and fail:
            msg = "%s: fix the errors listed above and run again (per-host findings: ansible_facts.layercheck_lint)" % summary
            return fail_reported(result, msg)
        return result
