package parser

import (
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Load reads inventory sources (-i arguments) as ansible-core 2.19 does,
// with the group_vars/ and host_vars/ beside each source.
//
// A source is a file (tried as a YAML/JSON inventory when it has no
// extension or .yml/.yaml/.json, then as INI, as Ansible's yaml and ini
// plugins do) or a directory, whose entries are read in sorted order and
// recursively, skipping hidden names, group_vars, host_vars, vars_plugins
// and Ansible's default INVENTORY_IGNORE_EXTS (.pyc .pyo .swp .bak ~ .rpm
// .md .txt .rst .orig .cfg .retry); LoadWith takes other ignore settings. group_vars/ and host_vars/ are read beside each
// -i argument: in it for a directory, beside it for a file.
//
// Errors name the file and line: a missing or unreadable source, a file
// neither plugin can parse. Inside a directory source a file that no plugin
// can parse is skipped with a warning, as Ansible does. Executable files
// (Ansible's script plugin) are never run: they are read as static files.
func Load(sources ...string) (*Inventory, error) {
	return LoadWith(LoadOptions{}, sources...)
}

// LoadOptions are the settings Load takes from Ansible's configuration.
type LoadOptions struct {
	// Ignore is what a directory source skips; the zero value is Ansible's
	// default (INVENTORY_IGNORE_EXTS as shipped, no INVENTORY_IGNORE_PATTERNS).
	// AnsibleInventoryIgnore reads the values Ansible would use.
	Ignore InventoryIgnore
	// UnparsedIsWarning makes a top-level source that no plugin can parse
	// (or a whole-file vault inventory, or a missing one) a warning, as ansible-core does with
	// its default INVENTORY_UNPARSED_IS_FAILED=false
	// (ansible-inventory --list exits 0); without it such a source is a
	// *SourceError. Special files, limits and group_vars/host_vars errors
	// stay errors either way.
	UnparsedIsWarning bool
}

// SourceError is a top-level inventory source that no plugin could parse.
type SourceError struct {
	Path  string
	Msg   string
	Vault bool // a whole-file ansible-vault inventory
}

func (e *SourceError) Error() string { return e.Msg }

// isVault reports whether data is a whole-file ansible-vault.
func isVault(data []byte) bool {
	return strings.HasPrefix(strings.TrimLeft(string(data[:min(len(data), 64)]), " \t\r\n"), "$ANSIBLE_VAULT;")
}

// vaultHeader is the first line of a vault file ($ANSIBLE_VAULT;1.1;AES256),
// which holds no secret.
func vaultHeader(data []byte) string {
	s := strings.TrimLeft(string(data[:min(len(data), 128)]), " \t\r\n")
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

// ErrNoInventoryFile is why a directory source yields nothing when none of
// its entries is an inventory file (only group_vars, or every file skipped
// by the inventory ignore settings); Load returns it wrapped, naming the
// first such top-level -i directory, when no source at all is an
// inventory, unless LoadOptions.UnparsedIsWarning.
var ErrNoInventoryFile = errors.New("no file in this directory is an inventory")

// LoadWith is Load with options. An ignore pattern Go cannot compile is an
// error before any source is read.
func LoadWith(opts LoadOptions, sources ...string) (*Inventory, error) {
	ignored, err := opts.Ignore.Regexp()
	if err != nil {
		return nil, err
	}
	inv := newInventory()
	inv.ignored = ignored
	inv.ignoredFrom = opts.Ignore.sourceName()
	inv.unparsedWarns = opts.UnparsedIsWarning
	inv.Sources = append([]string(nil), sources...)
	pre := prefetchVars(inv.Sources)
	parsedAny := false
	for _, src := range sources {
		if src == "" {
			continue
		}
		if strings.Contains(src, ",") {
			if _, err := os.Stat(src); err != nil {
				// a host list: "host1,host2,"
				inv.parseHostList(src)
				parsedAny = true
				continue
			}
		}
		ok, err := inv.parseSource(src, true)
		if err != nil {
			pre.cancel()
			return nil, err
		}
		parsedAny = parsedAny || ok
	}
	if !parsedAny && inv.noInventoryErr != nil {
		pre.cancel()
		return nil, inv.noInventoryErr
	}
	inv.Parsed = parsedAny || len(sources) == 0
	if parsedAny {
		inv.reconcile()
	} else if len(sources) > 0 {
		// as Ansible: without a parsed source the inventory is not reconciled
		inv.warnf("No inventory was parsed, only implicit localhost is available")
	}
	if err := inv.loadVarsFiles(pre); err != nil {
		return nil, err
	}
	inv.keepUnreadVarsDirs()
	return inv, nil
}

// keepUnreadVarsDirs drops from UnreadVarsDirs the directories that are
// read after all: those next to an -i argument (a subdirectory given
// with -i as well as its parent).
func (inv *Inventory) keepUnreadVarsDirs() {
	read := map[string]bool{}
	for _, d := range inv.varsDirs {
		if abs, err := filepath.Abs(d); err == nil {
			read[abs] = true
		}
	}
	kept := inv.UnreadVarsDirs[:0]
	for _, d := range inv.UnreadVarsDirs {
		if abs, err := filepath.Abs(filepath.Dir(d)); err == nil && read[abs] {
			continue
		}
		kept = append(kept, d)
	}
	inv.UnreadVarsDirs = kept
}

// defaultIgnored is Ansible's IGNORED regex with the default settings.
var defaultIgnored = func() *regexp.Regexp {
	re, err := InventoryIgnore{}.Regexp()
	if err != nil {
		panic(err) // constant input
	}
	return re
}()

func newInventory() *Inventory {
	inv := &Inventory{
		ignored:        defaultIgnored,
		hosts:          map[string]*Host{},
		groups:         map[string]*Group{},
		GroupVarsFiles: map[string][]*VarsFile{},
		HostVarsFiles:  map[string][]*VarsFile{},
	}
	inv.addGroup("all")
	inv.addGroup("ungrouped")
	_ = inv.addChild(inv.groups["all"], inv.groups["ungrouped"])
	return inv
}

func (inv *Inventory) warnf(format string, a ...any) {
	inv.warn(fmt.Sprintf(format, a...))
}

// warn adds a warning once: the same text twice is given once.
func (inv *Inventory) warn(w string) {
	if inv.warned == nil {
		inv.warned = map[string]bool{}
	}
	if inv.warned[w] {
		return
	}
	inv.warned[w] = true
	inv.Warnings = append(inv.Warnings, w)
}

// HostLimitError is an inventory with more than MaxHosts hosts after host
// ranges are expanded.
type HostLimitError struct {
	Pos   Pos // the host line that went over the limit
	Limit int
}

func (e *HostLimitError) Error() string {
	return fmt.Sprintf("%s: the inventory expands to more than %d hosts (host ranges such as web[0:99999] count every host; set LAYERCHECK_MAX_HOSTS to allow more)", e.Pos, e.Limit)
}

// Host returns the named host, or nil.
func (inv *Inventory) Host(name string) *Host { return inv.hosts[name] }

// Index is h's place in inv.Hosts, without a map of them: ok is false
// for a host that is not one of them.
func (inv *Inventory) Index(h *Host) (i int, ok bool) {
	if h == nil {
		return 0, false
	}
	if i := int(h.index); i < len(inv.Hosts) && inv.Hosts[i] == h {
		return i, true
	}
	for i, x := range inv.Hosts { // a host made outside addHost
		if x == h {
			return i, true
		}
	}
	return 0, false
}

// Group returns the named group, or nil.
func (inv *Inventory) Group(name string) *Group { return inv.groups[name] }

func (inv *Inventory) addGroup(name string) *Group {
	if g, ok := inv.groups[name]; ok {
		return g
	}
	g := &Group{Name: name, Vars: NewMap(), Priority: 1}
	if invalidGroupChars.MatchString(name) {
		// TRANSFORM_INVALID_GROUP_CHARS=never, ansible-core's default: kept, warned
		inv.warnf("Invalid characters were found in group name %q but not replaced (Ansible group names should be valid variable names)", name)
	}
	inv.groups[name] = g
	inv.Groups = append(inv.Groups, g)
	return g
}

// AddGroup returns the named group, creating it as a child of "all" when it
// does not exist, as Ansible's add_group/group_by do at run time.
func (inv *Inventory) AddGroup(name string) *Group {
	if g, ok := inv.groups[name]; ok {
		return g
	}
	g := inv.addGroup(name)
	_ = inv.addChild(inv.groups["all"], g)
	inv.groupVarsCache, inv.lastDirect, inv.lastLayer = nil, nil, nil
	return g
}

// AddHostToGroup adds h to g (no-op when already in it), as group_by does.
func (inv *Inventory) AddHostToGroup(g *Group, h *Host) {
	if g == nil || h == nil {
		return
	}
	inv.groupAddHost(g, h)
	if u := inv.groups["ungrouped"]; u != nil && g != u && g.Name != "all" && h.inGroup(u) {
		inv.groupRemoveHost(u, h)
	}
}

// inGroup reports whether h is directly in g. It looks through the host's
// few groups, not the group's hosts, so membership needs no per-group set
// (a group of a million hosts would need a million-entry map).
func (h *Host) inGroup(g *Group) bool {
	for _, hg := range h.Groups {
		if hg == g {
			return true
		}
	}
	return false
}

func (inv *Inventory) groupAddHost(g *Group, h *Host) bool {
	if h.inGroup(g) {
		return false
	}
	g.Hosts = append(g.Hosts, h)
	h.Groups = append(h.Groups, g)
	return true
}

func (inv *Inventory) groupRemoveHost(g *Group, h *Host) {
	if !h.inGroup(g) {
		return
	}
	for i, x := range g.Hosts {
		if x == h {
			g.Hosts = append(g.Hosts[:i:i], g.Hosts[i+1:]...)
			break
		}
	}
	for i, x := range h.Groups {
		if x == g {
			h.Groups = append(h.Groups[:i:i], h.Groups[i+1:]...)
			break
		}
	}
}

// ancestors is group.get_ancestors(): every group above g.
func (g *Group) ancestors() map[*Group]bool {
	seen := map[*Group]bool{}
	stack := append([]*Group(nil), g.Parents...)
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		stack = append(stack, p.Parents...)
	}
	return seen
}

// addChild is Group.add_child_group: depth update and loop detection.
func (inv *Inventory) addChild(parent, child *Group) error {
	if parent == child {
		return fmt.Errorf("can't add group to itself")
	}
	for _, c := range parent.Children {
		if c == child {
			return nil
		}
	}
	if parent.ancestors()[child] {
		return fmt.Errorf("Adding group '%s' as child to '%s' creates a recursive dependency loop.", child.Name, parent.Name)
	}
	parent.Children = append(parent.Children, child)
	if parent.Depth+1 > child.Depth {
		child.Depth = parent.Depth + 1
	}
	if err := child.checkChildrenDepth(); err != nil {
		return err
	}
	dup := false
	for _, p := range child.Parents {
		if p.Name == parent.Name {
			dup = true
		}
	}
	if !dup {
		child.Parents = append(child.Parents, parent)
	}
	return nil
}

func (g *Group) checkChildrenDepth() error {
	depth := g.Depth
	start := g.Depth
	seen := map[*Group]bool{}
	unprocessed := map[*Group]bool{}
	for _, c := range g.Children {
		unprocessed[c] = true
	}
	for len(unprocessed) > 0 {
		for c := range unprocessed {
			seen[c] = true
		}
		depth++
		next := map[*Group]bool{}
		for c := range unprocessed {
			if c.Depth < depth {
				c.Depth = depth
				for _, cc := range c.Children {
					next[cc] = true
				}
			}
		}
		unprocessed = next
		if depth-start > len(seen) {
			return fmt.Errorf("The group named '%s' has a recursive dependency loop.", g.Name)
		}
	}
	return nil
}

// hostCell is what addHost allocates for a new host.
type hostCell struct {
	host   Host
	vars   Map
	groups [1]*Group
}

// addHost is InventoryData.add_host: the port counts only when the host is new.
func (inv *Inventory) addHost(name string, g *Group, port *Value, pos Pos, source string) (*Host, error) {
	if name == "" {
		return nil, fmt.Errorf("Invalid empty host name provided: %s", name)
	}
	h, ok := inv.hosts[name]
	if !ok {
		if len(inv.hosts) >= MaxHosts {
			err := &HostLimitError{Pos: pos, Limit: MaxHosts}
			if inv.limitErr == nil {
				inv.limitErr = err
			}
			return nil, err
		}
		// the host, its empty variables and room for its first group in
		// one allocation: a million hosts are a million objects, not four
		c := &hostCell{}
		c.host = Host{Name: name, Vars: &c.vars, Groups: c.groups[:0], Pos: pos, Source: source, index: int32(len(inv.Hosts))}
		h = &c.host
		if port != nil {
			h.Vars.Set("ansible_port", port)
		}
		inv.hosts[name] = h
		inv.Hosts = append(inv.Hosts, h)
	}
	if g != nil {
		inv.groupAddHost(g, h)
	}
	return h, nil
}

// setGroupVar is Group.set_variable: ansible_group_priority sets the priority.
func (inv *Inventory) setGroupVar(g *Group, key string, v *Value) error {
	if key == "ansible_group_priority" {
		n, err := pythonInt(v)
		if err != nil {
			return fmt.Errorf("%s: ansible_group_priority: %v", v.Pos, err)
		}
		g.Priority = n
		return nil
	}
	g.Vars.Set(key, v)
	return nil
}

// setVariable is InventoryData.set_variable: a group of that name wins over a host.
func (inv *Inventory) setVariable(entity, key string, v *Value) error {
	if g, ok := inv.groups[entity]; ok {
		return inv.setGroupVar(g, key, v)
	}
	if h, ok := inv.hosts[entity]; ok {
		h.Vars.Set(key, v)
		return nil
	}
	return fmt.Errorf("Could not identify group or host named %s", entity)
}

// pythonInt is Python's int(value) as Group.set_variable applies it.
func pythonInt(v *Value) (int, error) {
	switch v.Kind {
	case KindInt:
		if !v.Int.IsInt64() {
			return 0, errors.New("integer out of range")
		}
		return int(v.Int.Int64()), nil
	case KindBool:
		if v.Bool {
			return 1, nil
		}
		return 0, nil
	case KindFloat:
		return int(v.Float), nil
	case KindString:
		s := strings.TrimSpace(strings.ReplaceAll(v.Str, "_", ""))
		n, err := yamlIntDecimal(s)
		if err != nil {
			return 0, fmt.Errorf("invalid literal for int() with base 10: %q", v.Str)
		}
		return n, nil
	}
	return 0, fmt.Errorf("int() argument must be a string or a number, not '%s'", v.Kind)
}

func yamlIntDecimal(s string) (int, error) {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || !n.IsInt64() {
		return 0, errors.New("not an int")
	}
	return int(n.Int64()), nil
}

// reconcile is InventoryData.reconcile_inventory.
func (inv *Inventory) reconcile() {
	all, ungrouped := inv.groups["all"], inv.groups["ungrouped"]
	for _, g := range inv.Groups {
		if g != all && len(g.Parents) == 0 {
			_ = inv.addChild(all, g)
		}
	}
	// hosts leave ungrouped in one pass over its hosts: removing them one
	// by one would scan the group once per host (quadratic)
	leave := map[*Host]bool{}
	for _, h := range inv.Hosts {
		if h.inGroup(ungrouped) {
			for _, g := range h.Groups {
				if g != all && g != ungrouped {
					leave[h] = true
					break
				}
			}
			continue
		}
		other := false
		for _, g := range h.Groups {
			if g != all {
				other = true
			}
		}
		if !other {
			inv.groupAddHost(ungrouped, h)
		}
	}
	if len(leave) > 0 {
		kept := ungrouped.Hosts[:0]
		for _, h := range ungrouped.Hosts {
			if !leave[h] {
				kept = append(kept, h)
				continue
			}
			for i, x := range h.Groups {
				if x == ungrouped {
					h.Groups = append(h.Groups[:i:i], h.Groups[i+1:]...)
					break
				}
			}
		}
		clear(ungrouped.Hosts[len(kept):])
		ungrouped.Hosts = kept
	}
	for _, g := range inv.Groups {
		if _, ok := inv.hosts[g.Name]; ok {
			inv.warnf("Found both group and host with same name: %s", g.Name)
		}
	}
}

// hostGroups is host.get_groups() without "all": the host's groups and all
// their ancestors, sorted as sort_groups does (depth, priority, name).
func (h *Host) allGroups() []*Group {
	seen := map[*Group]bool{}
	var out []*Group
	for _, g := range h.Groups {
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
		for a := range g.ancestors() {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

func sortGroups(gs []*Group) {
	sort.SliceStable(gs, func(i, j int) bool {
		a, b := gs[i], gs[j]
		if a.Depth != b.Depth {
			return a.Depth < b.Depth
		}
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		return a.Name < b.Name
	})
}

// GroupsOf returns h's groups and their ancestors except "all", in the
// order Ansible merges their variables (depth, ansible_group_priority, name).
func (inv *Inventory) GroupsOf(h *Host) []*Group {
	var out []*Group
	for _, g := range h.allGroups() {
		if g.Name != "all" {
			out = append(out, g)
		}
	}
	sortGroups(out)
	return out
}

// HostVars resolves h's variables with Ansible's precedence: inventory group
// vars (all, then groups by depth, ansible_group_priority, name) <
// group_vars/all < group_vars/<group> (same order) < inventory host vars <
// host_vars/<host> < extra. Each value keeps its Pos. extra may be nil.
//
// This is VariableManager.get_vars with ansible-core's default
// VARIABLE_PRECEDENCE (all_inventory, groups_inventory,
// all_plugins_inventory, all_plugins_play, groups_plugins_inventory,
// groups_plugins_play) and hash_behaviour=replace: a later value replaces
// an earlier one whole, dicts are not merged. With several sources, the
// group_vars of each source are applied source by source. Magic variables
// (inventory_hostname, group_names, inventory_file, ...) are not included.
// ansible_group_priority written in an inventory source orders the groups
// and is not a variable; written in a group_vars file it is an ordinary
// variable that orders nothing (ansible-core reads those files only when
// resolving variables, after the groups are sorted).
func (inv *Inventory) HostVars(h *Host, extra *Map) *Map {
	out := NewMap()
	if h == nil {
		return merge(out, extra)
	}
	out = inv.groupLayer(h).clone()
	merge(out, h.Vars)
	for _, dir := range inv.varsDirs {
		for _, f := range inv.HostVarsFiles[h.Name] {
			if f.dir == dir {
				merge(out, f.Vars)
			}
		}
	}
	return merge(out, extra)
}

// HostVarLayers is HostVars in two layers, without copying: group, the
// variables h gets from its groups (shared by every host in the same
// groups), and host, its own (h.Vars itself when no host_vars file adds
// to them: never change either) (inventory host vars, then
// host_vars files; nil when it has none). HostVars(h, extra) is group,
// then host, then extra, each replacing the one before.
func (inv *Inventory) HostVarLayers(h *Host) (group, host *Map) {
	group = inv.groupLayer(h)
	files := inv.HostVarsFiles[h.Name]
	if len(files) == 0 {
		if h.Vars.Len() > 0 {
			host = h.Vars // read only, like group
		}
		return group, host
	}
	if h.Vars.Len() > 0 {
		host = merge(NewMap(), h.Vars)
	}
	for _, dir := range inv.varsDirs {
		for _, f := range files {
			if f.dir == dir {
				if host == nil {
					host = NewMap()
				}
				merge(host, f.Vars)
			}
		}
	}
	return group, host
}

// groupLayer is groupLevelVars(GroupsOf(h)), the same for a host
// directly in the same groups as the host before.
func (inv *Inventory) groupLayer(h *Host) *Map {
	if inv.lastLayer != nil && slices.Equal(h.Groups, inv.lastDirect) {
		return inv.lastLayer
	}
	m := inv.groupLevelVars(inv.GroupsOf(h))
	inv.lastDirect, inv.lastLayer = append(inv.lastDirect[:0], h.Groups...), m
	return m
}

// groupLevelVars is the part of HostVars that depends only on the host's
// groups: inventory group vars, then group_vars files. Hosts in the same
// groups share it, so it is computed once per group list.
func (inv *Inventory) groupLevelVars(groups []*Group) *Map {
	var key strings.Builder
	for _, g := range groups {
		key.WriteString(g.Name)
		key.WriteByte(0)
	}
	if m, ok := inv.groupVarsCache[key.String()]; ok {
		return m
	}
	out := NewMap()
	if all := inv.groups["all"]; all != nil {
		merge(out, all.Vars)
	}
	for _, g := range groups {
		merge(out, g.Vars)
	}
	for _, dir := range inv.varsDirs {
		for _, f := range inv.GroupVarsFiles["all"] {
			if f.dir == dir {
				merge(out, f.Vars)
			}
		}
	}
	for _, dir := range inv.varsDirs {
		for _, g := range groups {
			for _, f := range inv.GroupVarsFiles[g.Name] {
				if f.dir == dir {
					merge(out, f.Vars)
				}
			}
		}
	}
	if inv.groupVarsCache == nil {
		inv.groupVarsCache = map[string]*Map{}
	}
	inv.groupVarsCache[key.String()] = out
	return out
}

func merge(dst, src *Map) *Map {
	if src == nil {
		return dst
	}
	for _, k := range src.Keys {
		dst.Set(k, src.Values[k])
	}
	return dst
}

// invalidGroupChars is ansible-core's C.INVALID_VARIABLE_NAMES.
var invalidGroupChars = regexp.MustCompile(`^[\d\W]|[^\w]`)

// parseSource is InventoryManager.parse_source. top is true for an -i
// argument (its failure is an error) and false inside a directory (a
// warning, as Ansible only warns).
func (inv *Inventory) parseSource(src string, top bool) (bool, error) {
	st, err := os.Stat(src)
	if err != nil {
		if top && inv.unparsedWarns && errors.Is(err, fs.ErrNotExist) {
			// ansible-inventory: "Unable to parse X as an inventory source", exit 0
			inv.warnf("Unable to parse %s as an inventory source: inventory source not found", src)
			return false, nil
		}
		if top {
			if errors.Is(err, fs.ErrNotExist) {
				return false, fmt.Errorf("%s: inventory source not found", src)
			}
			return false, fmt.Errorf("%s: %v", src, err)
		}
		inv.warnf("%s: %v", src, err)
		inv.unparsed(Pos{File: src}, err.Error())
		return false, nil
	}
	if st.IsDir() {
		entries, err := os.ReadDir(src)
		if err != nil {
			if top {
				return false, fmt.Errorf("%s: %v", src, err)
			}
			inv.warnf("%s: %v", src, err)
			return false, nil
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
		parsed := false
		var skipped []string
		failedBefore := len(inv.Unparsed)
		for _, n := range names {
			if inv.ignored.MatchString(n) {
				if !alwaysIgnored.MatchString(n) {
					skipped = append(skipped, n)
				} else if !top && (n == "group_vars" || n == "host_vars") {
					inv.UnreadVarsDirs = append(inv.UnreadVarsDirs, filepath.Join(src, n))
				}
				continue
			}
			ok, err := inv.parseSource(filepath.Join(src, n), false)
			if err != nil {
				return false, err
			}
			parsed = parsed || ok
		}
		if !parsed {
			// as Ansible, which warns for any source, a directory too,
			// that yields nothing; the reason is ours
			reason := ""
			if len(skipped) > 0 {
				reason = fmt.Sprintf(" (skipped by the inventory ignore settings, %s: %s)", inv.ignoredFrom, strings.Join(skipped, ", "))
			}
			failed := len(inv.Unparsed) > failedBefore
			// a file that failed is reported (with its line) by the lint;
			// a directory with no inventory file at all cannot be linted
			// unless another source is an inventory (a directory of
			// group_vars given as a second -i is read, as by Ansible)
			if top && !inv.unparsedWarns && !failed && inv.noInventoryErr == nil {
				hint := reason
				if len(skipped) > 0 {
					// kubespray's ansible.cfg skips .ini: its docs pass the file
					hint += "; name the file itself, e.g. -i " + filepath.Join(src, skipped[0])
				}
				inv.noInventoryErr = fmt.Errorf("%s: %w%s", src, ErrNoInventoryFile, hint)
			}
			if failed {
				inv.warnf("Unable to parse %s as an inventory source: none of its inventory files could be parsed", src)
			} else {
				inv.warnf("Unable to parse %s as an inventory source: %v%s", src, ErrNoInventoryFile, reason)
			}
		}
		return parsed, nil
	}
	data, err := inv.readCounted(src)
	if err != nil {
		var ke *FileKindError
		if errors.As(err, &ke) || isLimitError(err) {
			// never skipped quietly: a FIFO would hang Ansible, a limit
			// stops the load
			return false, err
		}
		if top {
			return false, fmt.Errorf("%s: %v", src, err)
		}
		inv.warnf("Unable to parse %s as an inventory source: %v", src, err)
		inv.unparsed(Pos{File: src}, err.Error())
		return false, nil
	}
	ext := filepath.Ext(src)
	var failures []string
	if ext == ".toml" {
		err := fmt.Errorf("%s: TOML inventories are not supported", src)
		if top {
			return false, err
		}
		inv.warnf("%v", err)
		inv.unparsed(Pos{File: src}, "TOML inventories are not supported")
		return false, nil
	}
	if isVault(data) {
		// ansible-core tries to decrypt it with every plugin and, without
		// a vault password, warns and skips it; never read it as INI
		msg := fmt.Sprintf("Unable to parse %s as an inventory source: it is a whole-file ansible-vault inventory (%s), which cannot be read without the vault password; its hosts and groups are unknown", src, vaultHeader(data))
		if top && !inv.unparsedWarns {
			return false, &SourceError{Path: src, Msg: msg, Vault: true}
		}
		inv.warnf("%s", msg)
		inv.unparsed(Pos{File: src, Line: 1}, "vault: whole-file ansible-vault inventory (not decrypted)")
		return false, nil
	}
	var yamlErr, iniErr error
	if ext == "" || ext == ".yml" || ext == ".yaml" || ext == ".json" {
		// like Ansible, a plugin that fails half way leaves what it added
		yamlErr = guard(src, func() error { return inv.parseYAMLInventory(src, data) })
		if inv.limitErr != nil {
			return false, inv.limitErr
		}
		if yamlErr == nil {
			return true, nil
		}
		failures = append(failures, "yaml: "+yamlErr.Error())
	}
	iniErr = guard(src, func() error { return inv.parseINI(src, data) })
	if inv.limitErr != nil {
		return false, inv.limitErr
	}
	if iniErr == nil {
		return true, nil
	}
	failures = append(failures, "ini: "+iniErr.Error())
	msg := fmt.Sprintf("Unable to parse %s as an inventory source: %s", src, strings.Join(failures, "; "))
	if top && !inv.unparsedWarns {
		return false, &SourceError{Path: src, Msg: msg}
	}
	inv.warnf("%s", msg)
	// the plugin a user means: yaml for .yml/.yaml/.json, ini otherwise
	main, reason := iniErr, "ini: "+iniErr.Error()
	if ext == ".yml" || ext == ".yaml" || ext == ".json" {
		main, reason = yamlErr, "yaml: "+yamlErr.Error()
	}
	pos := Pos{File: src}
	var ie *INIError
	var ye *YAMLError
	switch {
	case errors.As(main, &ie):
		pos = ie.Pos
	case errors.As(main, &ye):
		pos = ye.Pos
	}
	if pos.File == "" {
		pos.File = src
	}
	inv.unparsed(pos, reason)
	return false, nil
}

// unparsed records a file inside a directory source that was not parsed.
func (inv *Inventory) unparsed(pos Pos, reason string) {
	inv.Unparsed = append(inv.Unparsed, ParseFailure{Pos: pos, Reason: reason})
}

func (inv *Inventory) parseHostList(src string) {
	for _, h := range strings.Split(src, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		name, port := h, (*Value)(nil)
		if hp, p, err := parseAddress(h, false); err == nil {
			name = hp
			if p != nil {
				port = p
			}
		}
		if _, ok := inv.hosts[name]; !ok {
			_, _ = inv.addHost(name, inv.groups["ungrouped"], port, Pos{File: src}, "")
		}
	}
}

func (m *Map) clone() *Map {
	if m == nil {
		return NewMap()
	}
	c := &Map{Keys: append([]string(nil), m.Keys...), Values: make(map[string]*Value, len(m.Values))}
	for k, v := range m.Values {
		c.Values[k] = v
	}
	return c
}

// guard turns a panic in a plugin into an error naming the file: bad input
// must never crash the caller.
func guard(file string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: internal error while parsing: %v", file, r)
		}
	}()
	return f()
}
