package lint

import (
	"strings"

	"github.com/layercheck/layercheck/parser"
)

func init() {
	registerRule("inventory-unparsed", SeverityError,
		"a file inside an inventory directory no inventory plugin can parse (Ansible only warns and goes on without it)",
		checkUnparsed)
	registerStep("inventory-unparsed", phaseView, func(c *checkCtx, _ *Report) {
		c.in.Inventory = unparsedView(c.in.Inventory)
	})
}

// unparsedView is what the lint checks when sources were given but none
// was parsed: as Ansible, an inventory without hosts (ansible-inventory
// --list and `hosts: all` show none, only implicit localhost), keeping the
// sources (for locations) and the parse failures.
func unparsedView(inv *parser.Inventory) *parser.Inventory {
	if inv == nil || inv.Parsed {
		return inv
	}
	empty, err := parser.Load()
	if err != nil { // no sources: cannot fail
		return inv
	}
	empty.Sources = inv.Sources
	empty.Unparsed = inv.Unparsed
	empty.Warnings = inv.Warnings
	empty.Parsed = false
	return empty
}

func checkUnparsed(c *checkCtx) []Finding {
	inv := c.in.Inventory
	if inv == nil {
		return nil
	}
	var out []Finding
	for _, u := range inv.Unparsed {
		rel := c.relPath(u.Pos.File)
		reason := strings.ReplaceAll(u.Reason, u.Pos.File, rel)
		f := Finding{
			Rule:     "inventory-unparsed",
			Severity: SeverityError,
			Where:    c.where(u.Pos),
			Message:  "Ansible cannot parse " + rel + " as an inventory source (" + reason + ")",
			Why: "Ansible only warns (\"Unable to parse " + rel + " as an inventory source\") and goes on: the hosts, groups and " +
				"variables the file defines after the failing line are missing, what came before it stays.",
			Fix: "correct the line named, or keep the file out of the inventory directory (ansible.cfg [inventory] ignore_patterns or ignore_extensions)",
		}
		if !inv.Parsed {
			f.Why += " No inventory source was parsed at all, so Ansible does not finish loading the inventory (\"No inventory was parsed, only implicit localhost is available\"): ansible-inventory --list and plays on all show no host, and the lint checks none."
		}
		out = append(out, f)
	}
	return out
}
