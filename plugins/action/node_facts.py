# Copyright: layercheck authors
# Apache License 2.0 (see LICENSE)
"""Action of the Go binary module node_facts.

It runs ``node_facts_<system>_<arch>`` for the host the module executes on,
with the task's arguments unchanged; an action plugin named after its
module, so the module's documentation (plugins/modules/node_facts.yml) is
the action's too. See plugins/plugin_utils/binary_module.py.
"""
from __future__ import annotations

from ansible_collections.layercheck.kubespray.plugins.plugin_utils.binary_module import BinaryModuleAction


class ActionModule(BinaryModuleAction):
    pass
