# Copyright: layercheck authors
# Apache License 2.0 (see LICENSE)
"""Run a layercheck Go binary module built for the target's platform.

A binary module of this collection is shipped once per platform as
``plugins/bin/<module>_<system>_<arch>`` (``make modules`` builds
linux/amd64 and linux/arm64), outside ``plugins/modules`` so that Ansible
does not take each binary for a module of its own (``ansible-doc -l``
would list and warn about them). ``plugins/modules/<module>`` holds the
module's documentation and a stub. The task names ``<module>``; this action
picks the binary for the host the module executes on (the delegated host
when the task has ``delegate_to``) from its ``ansible_system`` and
``ansible_architecture`` facts, gathering the ``platform`` fact subset when
they are unknown, and runs it through ``_execute_module`` so that check
mode, async, become and the remote tmp dir behave as for any module.

An action that runs a binary on the controller itself (verify_report runs
``layercheck report``) finds it with ``controller_binary``.
"""
from __future__ import annotations

import os
import platform as _platform

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

# ansible_system -> Go's GOOS
SYSTEMS = {"Linux": "linux"}
# ansible_architecture (uname -m, or what the setup module reports) -> GOARCH
ARCHES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


HINT = "build it with `make modules` in a layercheck checkout, or install a collection release that ships it"


def controller_binary(name, action):
    """The path of plugins/bin/<name>_<os>_<arch> of this collection for the
    controller's platform, which an action runs on the controller itself
    (not as a module on a host); AnsibleActionFail naming the binary looked
    for when there is none."""
    system, arch = _platform.system(), _platform.machine()
    goos, goarch = SYSTEMS.get(system), ARCHES.get(arch)
    binary = "%s_%s_%s" % (name, goos or system.lower(), goarch or arch)
    bindir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin")
    path = os.path.join(bindir, binary)
    if not (goos and goarch and os.path.isfile(path) and os.access(path, os.X_OK)):
        raise AnsibleActionFail("%s: no layercheck binary for %s/%s on the controller (looked for %s): %s"
                                % (action, goos or system, goarch or arch, path, HINT))
    return path


class BinaryModuleAction(ActionBase):
    """Base class of the collection's binary-module actions.

    Subclasses may override ``module_args`` to add what only the controller
    knows. ``BINARY_HINT`` is shown when no binary matches.
    """

    _supports_check_mode = True
    _supports_async = True

    BINARY_HINT = HINT

    def module_args(self, task_vars):
        """The arguments passed to the binary (default: the task's)."""
        return dict(self._task.args)

    def run(self, tmp=None, task_vars=None):
        if task_vars is None:
            task_vars = {}
        result = super().run(tmp, task_vars)
        del tmp

        module = self._task.resolved_action or self._task.action
        system, arch = self._target_platform(task_vars)
        goos, goarch = SYSTEMS.get(system), ARCHES.get(arch)
        binary = "%s_%s_%s" % (module.rsplit(".", 1)[-1], goos or str(system).lower(), goarch or arch)
        found = None
        if goos and goarch:
            found = self._find_binary(module, binary)
        if not found:
            raise AnsibleActionFail(
                "no layercheck binary for %s/%s (module %s, looked for %s): %s"
                % (goos or system, goarch or arch, module, binary, self.BINARY_HINT))

        args = self.module_args(task_vars)
        wrap_async = self._task.async_val and not self._connection.has_native_async
        result = merge_hash(result, self._execute_module(
            module_name=found, module_args=args, task_vars=task_vars, wrap_async=wrap_async))
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    def _find_binary(self, module, binary):
        """The name _execute_module runs the binary by, or None.

        The binary is plugins/bin/<binary> of the collection the module's
        stub (plugins/modules/<module>) was found in; that directory is
        added to this worker's module search path, so Ansible builds,
        transfers and runs the binary as any binary module.
        """
        loader = self._shared_loader_obj.module_loader
        stub = loader.find_plugin_with_context(module, collection_list=self._task.collections)
        if not stub or not stub.resolved or not stub.plugin_resolved_path:
            return None
        bindir = os.path.join(os.path.dirname(os.path.dirname(stub.plugin_resolved_path)), "bin")
        if not os.path.isfile(os.path.join(bindir, binary)):
            return None
        loader.add_directory(bindir)
        # ansible.legacy: the module search path, which now holds bindir.
        name = "ansible.legacy." + binary
        found = loader.find_plugin_with_context(name)
        if not found or not found.resolved or \
                os.path.realpath(os.path.dirname(found.plugin_resolved_path)) != os.path.realpath(bindir):
            return None
        return name

    def _target_platform(self, task_vars):
        """(ansible_system, ansible_architecture) of the host the module runs on."""
        if self._task.delegate_to:
            host_vars = (task_vars.get("ansible_delegated_vars") or {}).get(self._task.delegate_to) or {}
        else:
            host_vars = task_vars
        facts = host_vars.get("ansible_facts") or {}
        system = facts.get("system") or host_vars.get("ansible_system")
        arch = facts.get("architecture") or host_vars.get("ansible_architecture")
        if system and arch:
            return str(system), str(arch)
        if getattr(self._connection, "transport", None) == "local":
            # The module runs on this controller: ask Python, as the setup
            # module's platform collector would (platform.system/machine).
            return _platform.system(), _platform.machine()
        gathered = self._execute_module(
            module_name="ansible.legacy.setup",
            module_args={"gather_subset": ["!all", "!min", "platform"]},
            task_vars=task_vars)
        if gathered.get("failed"):
            raise AnsibleActionFail(
                "cannot tell the platform of %s to pick a layercheck binary: setup (platform) failed: %s"
                % (self._task.delegate_to or task_vars.get("inventory_hostname"), gathered.get("msg", gathered)))
        facts = gathered.get("ansible_facts") or {}
        return str(facts.get("ansible_system")), str(facts.get("ansible_architecture"))
