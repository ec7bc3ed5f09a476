# Copyright: layercheck authors
# Apache License 2.0 (see LICENSE)
"""What the collection's report actions share (lint_report, verify_report).

A report action prints its report once, as plain text straight to the
output, and then fails with a one-line message when it must: the report is
not repeated in the failure, and the failure shows no task source (the
roles' task files are no business of the operator).
"""
from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.release import __version__ as ansible_core_version

# From ansible-core 2.19 a failed result becomes an error event that the
# default callback prints with the task's source; ReportedFailure avoids
# it. Before, a result with failed and msg prints just the fatal line.
ERROR_EVENTS = tuple(int(x) for x in ansible_core_version.split(".")[:2]) >= (2, 19)


class ReportedFailure(AnsibleActionFail):
    """A failure whose details were printed already: the task result holds
    ``failed`` and ``msg`` only, so ansible-core >= 2.19 prints no error
    block (message plus the task's source) repeating what the report said."""

    @property
    def omit_exception_key(self):
        return True


def check_options(action, args, options):
    """Fail on a task argument the action does not know."""
    unknown = sorted(set(args) - options)
    if unknown:
        raise AnsibleActionFail("%s: unsupported options %s (supported: %s)"
                                % (action, ", ".join(unknown), ", ".join(sorted(options))))


def fail_reported(result, msg):
    """Make result a failure with msg, the report having been printed:
    raises ReportedFailure on ansible-core >= 2.19, else returns result
    with failed and msg set (which the caller returns)."""
    if ERROR_EVENTS:
        raise ReportedFailure(msg, result=result)
    result.update(failed=True, msg=msg)
    return result
