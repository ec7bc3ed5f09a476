package parser

import "regexp"

// ParseFailure is a file inside a directory source that was not parsed.
type ParseFailure struct {
	Pos    Pos    // the file, and the line (and column) the parse failed on when known
	Reason string // the plugin's error, e.g. "ini: hosts.ini:7: Expected key=value ..."
}

// Inventory is an Ansible inventory as ansible-core 2.19 loads it from one or
// more sources (-i arguments: INI, YAML or JSON files, or directories of
// them), together with the group_vars/ and host_vars/ found beside each
// source. It knows nothing of kubespray.
type Inventory struct {
	// Sources are the -i arguments as given.
	Sources []string
	// Hosts in the order Ansible first meets them.
	Hosts []*Host
	// Groups, "all" and "ungrouped" first, then in the order Ansible creates them.
	Groups []*Group
	// GroupVarsFiles holds, per group name, the group_vars files read for it
	// in Ansible's order, also for names that no group has (yet): a group
	// created at run time (kubespray's group_by) gets them then.
	GroupVarsFiles map[string][]*VarsFile
	// HostVarsFiles holds, per host name, the host_vars files read for it.
	HostVarsFiles map[string][]*VarsFile
	// Warnings are what Ansible would warn about, and what was not read
	// (a whole-file vault, a SOPS file), each naming the file.
	Warnings []string
	// Unparsed are the files inside a directory source that no plugin could
	// parse (Ansible warns and goes on), in the order met, each with the
	// line the parse failed on where known. What such a file added before
	// it failed stays, as in Ansible.
	Unparsed []ParseFailure
	// Parsed is false when sources were given but none was parsed: Ansible
	// then warns "No inventory was parsed", does not reconcile the
	// inventory, and ansible-inventory --list and `hosts: all` show no host.
	Parsed bool
	// UnreadVarsDirs are group_vars/ and host_vars/ directories found in a
	// subdirectory of a directory source: Ansible reads these only next to
	// an -i argument, so their variables apply to no host.
	UnreadVarsDirs []string

	hosts  map[string]*Host
	groups map[string]*Group
	// varsDirs are the directories whose group_vars/ and host_vars/ are
	// read, one per -i argument in order (repeats kept, as Ansible does).
	varsDirs []string
	// groupVarsCache memoises groupLevelVars by group list; AddGroup clears it.
	groupVarsCache map[string]*Map
	// lastDirect and lastLayer memoise groupLayer for the hosts in a row
	// that are directly in the same groups (a host range): their group
	// list need not be walked and sorted again. AddGroup clears them.
	lastDirect []*Group
	lastLayer  *Map
	// ignored is the IGNORED regex for directory entries (LoadOptions.Ignore).
	ignored *regexp.Regexp
	// ignoredFrom says where ignored's settings came from, for messages.
	ignoredFrom string
	// bytesRead counts the bytes of every file read, against MaxInventoryBytes.
	bytesRead int64
	// limitErr is the first limit hit (MaxHosts, MaxInventoryBytes): it
	// stops the load even inside a directory source, where parse failures
	// are only warnings.
	limitErr error
	// noInventoryErr is the first top-level directory in which no file is
	// an inventory (ErrNoInventoryFile): the load's error when no source
	// at all is parsed, unless UnparsedIsWarning.
	noInventoryErr error
	// unparsedWarns is LoadOptions.UnparsedIsWarning.
	unparsedWarns bool
	// warned holds the warnings given, so each is given once.
	warned map[string]bool
}

// VarsFile is one group_vars or host_vars file.
type VarsFile struct {
	Path string
	Vars *Map
	// Vault is true for a whole-file ansible-vault: its variables are
	// unknown (never decrypted) and Vars is empty.
	Vault bool

	dir string // the inventory directory whose group_vars/host_vars holds it
}

// Group is an inventory group with the variables written for it in
// inventory sources (not group_vars files: see Inventory.GroupVarsFiles).
type Group struct {
	Name     string
	Vars     *Map
	Hosts    []*Host
	Children []*Group
	Parents  []*Group
	Pos      Pos
	// Depth is Ansible's group depth: 0 for "all", else the longest chain
	// of parents down from a top group (group.py add_child_group).
	Depth int
	// Priority is ansible_group_priority as set in inventory sources
	// (default 1); in group_vars files it is an ordinary variable.
	Priority int
}

// Host is an inventory host with the variables written for it in inventory
// sources (not host_vars files: see Inventory.HostVarsFiles).
type Host struct {
	Name string
	Vars *Map
	// Groups the host is directly in, in the order it was added to them.
	Groups []*Group
	Pos    Pos
	// Source is the inventory file in which the host was first met
	// (Ansible's inventory_file).
	Source string
	// index is the host's place in Inventory.Hosts (Inventory.Index); an
	// int32 keeps a host and its first group in 160 bytes.
	index int32
}
