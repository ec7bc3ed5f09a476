# Copyright: layercheck authors
# Apache License 2.0 (see LICENSE)
"""Action for layercheck.kubespray.inventory_lint.

Runs the Go binary built for the controller (the task is delegated to
localhost) and adds what only the controller knows:

* ``inventory``: defaults to the play's ``ansible_inventory_sources``;
  relative paths are made absolute against the directory ansible-playbook
  was started in.
* ``kubespray_dir``: made absolute against the same directory.
* ``ignore_extensions`` / ``ignore_patterns``: Ansible's effective
  ``INVENTORY_IGNORE_EXTS`` / ``INVENTORY_IGNORE_PATTERNS`` (environment or
  ansible.cfg), so a directory source skips what Ansible skipped; the module
  adds kubespray's ``artifacts`` and ``credentials`` itself.
* ``extra_vars``: the extra vars exactly as Ansible loaded them
  (``ansible.utils.vars.load_extra_vars`` with this plugin's loader: the
  same cached dict the variable manager uses), so ``-e`` values keep
  Ansible's types. Vault values are sent as ``{"__ansible_vault": ""}``,
  never decrypted, never as ciphertext; so are strings Ansible decrypted
  from a whole-file vault (``-e @vault.yml`` with a vault password).
* ``extra_vars_args``: the ``-e`` arguments as given (``@file`` made
  absolute), from which the module takes each extra var's location.
* ``ansible_core``: the ansible-core version running the play, so string
  booleans are judged by what this ansible-core does with them.
* ``resolved``: for ``host`` / ``hosts``, the raw values Ansible resolved
  for each host (``hostvars.raw_get``: inventory, group_vars, host_vars,
  facts, extra vars; no templating), keeping only plain
  bool/int/float/str/None values. Vault values, strings holding Jinja (their
  rendered value is unknown here) and Ansible's magic variables are left
  out. Each distinct (variable, value, origin) is sent once.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

from ansible import constants as C
from ansible import context
from ansible.errors import AnsibleActionFail
from ansible.utils.vars import load_extra_vars

from ansible_collections.layercheck.kubespray.plugins.plugin_utils.binary_module import BinaryModuleAction

from ansible.parsing.vault import is_encrypted_file

try:  # ansible-core >= 2.19 data tagging
    from ansible._internal._datatag._tags import Origin, SourceWasEncrypted, VaultedValue
    from ansible.parsing.vault import EncryptedString
except ImportError:  # ansible-core < 2.19: no data tagging
    Origin = SourceWasEncrypted = VaultedValue = None
    EncryptedString = ()
try:  # ansible-core < 2.19: inline !vault values
    from ansible.parsing.yaml.objects import AnsibleVaultEncryptedUnicode
except ImportError:
    AnsibleVaultEncryptedUnicode = ()

_ENCRYPTED_FILES = {}


def _encrypted_file(path):
    """Whether path is a whole-file ansible-vault (cached per path)."""
    if path not in _ENCRYPTED_FILES:
        try:
            with open(path, "rb") as f:
                _ENCRYPTED_FILES[path] = is_encrypted_file(f)
        except OSError:
            _ENCRYPTED_FILES[path] = False
    return _ENCRYPTED_FILES[path]


VAULT = {"__ansible_vault": ""}
_SKIP = object()

# Variables Ansible itself sets for every host (magic variables); they are
# no inventory setting. Names starting with ansible_ are Ansible's too.
MAGIC = frozenset((
    "environment", "group_names", "groups", "hostvars", "inventory_dir", "inventory_file",
    "inventory_hostname", "inventory_hostname_short", "omit", "play_hosts", "playbook_dir",
    "role_name", "role_names", "role_path", "role_uuid",
))
TEMPLATE_MARKERS = ("{{", "{%", "{#")
OPTIONS = frozenset((
    "inventory", "host", "hosts", "extra_vars", "extra_vars_args", "resolved",
    "kubespray_version", "kubespray_dir", "hosts_listed", "ignore_extensions", "ignore_patterns",
    "upgrade_from", "ansible_core", "cluster_state",
))


def _is_vault(value):
    """A vault value, or one Ansible decrypted: an inline !vault value, or a
    value loaded from a whole-file vault (Ansible tags those only with their
    Origin, so the file itself is looked at)."""
    if EncryptedString and isinstance(value, EncryptedString):
        return True
    if AnsibleVaultEncryptedUnicode and isinstance(value, AnsibleVaultEncryptedUnicode):
        return True
    if VaultedValue is not None and (VaultedValue.is_tagged_on(value) or SourceWasEncrypted.is_tagged_on(value)):
        return True
    if Origin is not None and isinstance(value, str):
        tag = Origin.get_tag(value)
        if tag is not None and tag.path and _encrypted_file(tag.path):
            return True
    return False


def plain(value, depth=0):
    """A JSON-safe copy of a loaded value with Python's types kept (tags dropped)."""
    if depth > 100:
        return _SKIP
    if _is_vault(value):
        return dict(VAULT)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else _SKIP
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            pv = plain(v, depth + 1)
            if pv is not _SKIP:
                out[str(k)] = pv
        return out
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        return [pv for pv in (plain(v, depth + 1) for v in value) if pv is not _SKIP]
    return _SKIP


def plain_scalar(value):
    """A resolved value worth sending: plain scalar, no vault, no Jinja."""
    if _is_vault(value):
        return _SKIP
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, str) and any(m in value for m in TEMPLATE_MARKERS):
            return _SKIP
        return plain(value)
    return _SKIP


def origin_of(value):
    if Origin is None:
        return None
    tag = Origin.get_tag(value)
    if tag is None or not tag.path:
        return None
    return str(tag)


class ActionModule(BinaryModuleAction):

    def module_args(self, task_vars):
        args = dict(self._task.args)
        unknown = sorted(set(args) - OPTIONS)
        if unknown:
            # The binary would say the same; saying it here avoids gathering
            # 5,000 hosts' values for a task that cannot run.
            raise AnsibleActionFail(
                "Unsupported parameters for (%s) module: %s. Supported parameters include: %s."
                % (self._task.resolved_action or self._task.action, ", ".join(unknown), ", ".join(sorted(OPTIONS))))
        cwd = os.getcwd()
        sources = args.get("inventory")
        if sources is None:
            sources = task_vars.get("ansible_inventory_sources") or []
        if isinstance(sources, str):
            sources = [sources]
        if isinstance(sources, Sequence):
            # A host list ("node1,node2,") is no path; the module says so.
            args["inventory"] = [s if "," in s else os.path.join(cwd, os.path.expanduser(s))
                                 for s in (str(s) for s in sources)]
        if args.get("kubespray_dir"):
            args["kubespray_dir"] = os.path.join(cwd, os.path.expanduser(str(args["kubespray_dir"])))
        if "ansible_core" not in args:
            from ansible.release import __version__ as ansible_core_version
            args["ansible_core"] = ansible_core_version
        if "ignore_extensions" not in args:
            args["ignore_extensions"] = [str(e) for e in C.INVENTORY_IGNORE_EXTS]
        if "ignore_patterns" not in args:
            args["ignore_patterns"] = [str(p) for p in C.INVENTORY_IGNORE_PATTERNS]
        if "extra_vars" not in args:
            loaded = load_extra_vars(self._loader)
            args["extra_vars"] = {str(k): pv for k, pv in ((k, plain(v)) for k, v in loaded.items()) if pv is not _SKIP}
            cli = context.CLIARGS.get("extra_vars", ()) or ()
            args["extra_vars_args"] = [self._absolute_file_arg(str(a), cwd) for a in cli if a]
        if "resolved" not in args:
            hosts = []
            if args.get("host"):
                hosts.append(str(args["host"]))
            if isinstance(args.get("hosts"), Sequence) and not isinstance(args.get("hosts"), str):
                hosts.extend(str(h) for h in args["hosts"])
            if hosts:
                args["resolved"] = self._resolved(task_vars, hosts)
        return args

    @staticmethod
    def _absolute_file_arg(arg, cwd):
        # load_extra_vars reads "@file" relative to the loader's basedir,
        # which is the start directory when extra vars are loaded.
        if arg.startswith("@") and not os.path.isabs(arg[1:]):
            return "@" + os.path.join(cwd, arg[1:])
        return arg

    def _resolved(self, task_vars, hosts):
        hostvars = task_vars.get("hostvars")
        if hostvars is None or not hasattr(hostvars, "raw_get"):
            return None
        index = {}
        values = []
        out = {}
        for host in dict.fromkeys(hosts):
            raw = hostvars.raw_get(host)
            if not isinstance(raw, Mapping):
                continue  # not in the inventory (e.g. implicit localhost)
            idx = []
            for name, value in raw.items():
                name = str(name)
                if name in MAGIC or name.startswith("ansible_") or name.startswith("layercheck_"):
                    continue
                pv = plain_scalar(value)
                if pv is _SKIP:
                    continue
                origin = origin_of(value)
                key = (name, type(pv), pv, origin)
                i = index.get(key)
                if i is None:
                    i = index[key] = len(values)
                    values.append([name, pv, origin] if origin else [name, pv])
                idx.append(i)
            out[host] = idx
        return {"values": values, "hosts": out}
