package lint

import "fmt"

func init() {
	registerRule("ansible-type-mismatch", SeverityInfo,
		"a value Ansible resolved with another type than layercheck's own reading of the inventory (only with resolved values from the inventory_lint module)",
		checkAnsibleTypes)
}

func checkAnsibleTypes(c *checkCtx) []Finding {
	if c.in.Resolved == nil {
		return nil
	}
	var out []Finding
	for _, name := range c.names() {
		for _, u := range c.uses(name) {
			if u.judge == u.ours || u.ours == nil || u.judge == nil {
				continue
			}
			if u.ours.Templated() || u.ours.IsVault() || u.judge.Kind == u.ours.Kind {
				continue
			}
			f := c.finding("ansible-type-mismatch", SeverityInfo, u)
			f.Message = fmt.Sprintf("Ansible resolved %s to the %s %s; layercheck read the %s %s here", name, u.judge.Kind, u.judge.Display(), u.ours.Kind, u.ours.Display())
			f.Why = "the findings use Ansible's type; a difference means layercheck's inventory reader disagrees with ansible-core for this value (please report it)."
			out = append(out, f)
		}
	}
	return out
}
