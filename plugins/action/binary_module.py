# Copyright: layercheck authors
# Apache License 2.0 (see LICENSE)
"""Generic action for the collection's Go binary modules.

meta/runtime.yml routes each binary module (node_facts, and any later one)
here: the action runs ``<module>_<system>_<arch>`` for the host the module
executes on, with the task's arguments unchanged. See
plugins/plugin_utils/binary_module.py.
"""
from __future__ import annotations

from ansible_collections.layercheck.kubespray.plugins.plugin_utils.binary_module import BinaryModuleAction


class ActionModule(BinaryModuleAction):
    pass
