package parser

// LoadYAML parses one YAML document as ansible-core's AnsibleLoader does
// (YAML 1.1 scalars, !vault, !unsafe, merge keys, aliases bounded) and
// returns it, or nil for an empty document. Errors name file:line:col;
// warn (may be nil) receives duplicate-key warnings. The kubespray
// catalogue reads kubespray's defaults and vars with it, so both agree on
// every type.
func LoadYAML(file string, data []byte, warn func(string)) (*Value, error) {
	return loadYAML(file, data, warn)
}
