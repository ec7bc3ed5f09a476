// Package parser loads Ansible inventories exactly as ansible-core 2.19
// does, keeping for every value the type Ansible gives it and where it was
// written (file:line:col, or "-e" for extra vars).
//
// What is reproduced, and from which ansible-core 2.19 source:
//
//   - Sources (inventory/manager.py parse_sources/parse_source): files and
//     directories; a directory is read in sorted order, recursively, skipping
//     hidden names, group_vars, host_vars, vars_plugins and
//     INVENTORY_IGNORE_EXTS. A file is tried with the yaml plugin (no
//     extension, .yml, .yaml, .json) and then the ini plugin; "a,b," is a
//     host list.
//   - INI (plugins/inventory/ini.py): [group], [group:children],
//     [group:vars], host ranges (plugins/inventory/__init__.py
//     expand_hostname_range, parsing/utils/addresses.py parse_address),
//     shlex-split host lines with comments, and every value through
//     ast.literal_eval (a Go subset in pyliteral.go), else kept as str.
//   - YAML and JSON (plugins/inventory/yaml.py, parsing/utils/yaml.py
//     from_yaml, _internal/_yaml): JSON first, then YAML with PyYAML's YAML
//     1.1 implicit resolvers (yes/no/on/off are bools, 0o17 is a str, 017 is
//     octal, 1:30 is sexagesimal, 1e3 is a str), !vault, !unsafe, merge keys,
//     !!omap, timestamps (a KindString holding Python's isoformat, as
//     ansible-inventory prints them; Raw keeps the text), duplicate keys
//     warned (last wins). Alias expansion is bounded.
//   - group_vars/ and host_vars/ beside each source (plugins/vars/
//     host_group_vars.py, parsing/dataloader.py find_vars_files).
//   - Groups (inventory/data.py, group.py, host.py): implicit all and
//     ungrouped, depth, ansible_group_priority, loops refused.
//   - Variable precedence (vars/manager.py get_vars with the default
//     VARIABLE_PRECEDENCE and hash_behaviour=replace): see
//     Inventory.HostVars.
//   - Extra vars (utils/vars.py load_extra_vars, parsing/splitter.py
//     parse_kv): see ParseExtraVars.
//   - Output (cli/inventory.py json_inventory): see Inventory.ListJSON.
//
// Known differences, each narrow: executable inventory files are read as
// static files, never run (Ansible's script plugin would run them); TOML
// inventories are not read; whole-file vaults are not decrypted (Ansible
// fails on them without the password; here they are skipped with a
// warning); a YAML "! 12" (non-specific tag) is an int here, a str in
// PyYAML; the order Python gives a literal set of strings (it varies per
// process) is kept as written; a file that no plugin can parse is an error when
// given with -i (Ansible only warns and goes on with an empty inventory).
package parser
