package parser

import (
	"fmt"
)

// parseYAMLInventory is ansible-core's yaml inventory plugin
// (plugins/inventory/yaml.py), which also reads JSON.
func (inv *Inventory) parseYAMLInventory(file string, data []byte) error {
	var warnings []string
	doc, err := loadData(file, data, func(w string) { warnings = append(warnings, w) })
	if err != nil {
		return err
	}
	if doc == nil || isFalsy(doc) {
		return fmt.Errorf("%s: Parsed empty YAML file", file)
	}
	if doc.Kind != KindMap {
		return fmt.Errorf("%s: YAML inventory has invalid structure, it should be a dictionary, got: %s", doc.Pos, doc.Kind)
	}
	if p := doc.Map.Get("plugin"); p != nil && !isFalsy(p) {
		return fmt.Errorf("%s: Plugin configuration YAML file, not YAML inventory", file)
	}
	for _, w := range warnings {
		inv.warn(w)
	}
	for _, name := range doc.Map.Keys {
		if _, err := inv.yamlGroup(name, doc.Map.Values[name], doc.Map.KeyPos(name), 0); err != nil {
			return err
		}
	}
	return nil
}

func (inv *Inventory) yamlGroup(name string, data *Value, posOfKey Pos, depth int) (string, error) {
	if depth > 1000 {
		return "", fmt.Errorf("%s: groups nested too deeply", data.Pos)
	}
	if data.Kind != KindMap && data.Kind != KindNull {
		inv.warnf("%s: Skipping '%s' as this is not a valid group definition", data.Pos, name)
		return name, nil
	}
	if name == "" {
		return "", fmt.Errorf("%s: Unable to add group %s: Invalid empty/false group name provided: %s", data.Pos, name, name)
	}
	g := inv.groups[name]
	if g == nil {
		g = inv.addGroup(name)
		g.Pos = data.Pos
		if kp := posOfKey; kp.File != "" {
			g.Pos = kp
		}
	}
	if data.Kind == KindNull {
		return name, nil
	}
	sections := data.Map
	for _, section := range []string{"vars", "children", "hosts"} {
		sv := sections.Get(section)
		if sv == nil {
			continue
		}
		if sv.Kind == KindString {
			m := NewMap()
			m.Set(sv.Str, &Value{Kind: KindNull, Pos: sv.Pos, Origin: sv.Origin})
			sv = &Value{Kind: KindMap, Map: m, Pos: sv.Pos, Origin: sv.Origin}
			sections = sections.clone()
			sections.Set(section, sv)
		}
		if sv.Kind != KindMap && sv.Kind != KindNull {
			return "", fmt.Errorf("%s: Invalid \"%s\" entry for \"%s\" group, requires a dictionary, found \"%s\" instead.", sv.Pos, section, name, sv.Kind)
		}
	}
	for _, key := range sections.Keys {
		sv := sections.Values[key]
		if sv.Kind != KindMap && sv.Kind != KindNull {
			inv.warnf("%s: Skipping key (%s) in group (%s) as it is not a mapping, it is a %s", sv.Pos, key, name, sv.Kind)
			continue
		}
		if sv.Kind == KindNull {
			continue
		}
		switch key {
		case "vars":
			for _, k := range sv.Map.Keys {
				if err := inv.setGroupVar(g, k, sv.Map.Values[k]); err != nil {
					return "", err
				}
			}
		case "children":
			for _, sub := range sv.Map.Keys {
				child, err := inv.yamlGroup(sub, sv.Map.Values[sub], sv.Map.KeyPos(sub), depth+1)
				if err != nil {
					return "", err
				}
				if err := inv.addChildByName(name, child); err != nil {
					return "", fmt.Errorf("%s: %v", sv.Map.Values[sub].Pos, err)
				}
			}
		case "hosts":
			for _, pattern := range sv.Map.Keys {
				hv := sv.Map.Values[pattern]
				hpos := sv.Map.KeyPos(pattern)
				if hpos.File == "" {
					hpos = hv.Pos
				}
				if sv.Map.KeyKind(pattern) != KindString {
					return "", fmt.Errorf("%s: Host pattern %s must be a string. Enclose integers/floats in quotation marks.", hpos, pattern)
				}
				hosts, port, err := expandHostPattern(pattern)
				if err != nil {
					return "", fmt.Errorf("%s: %v", hv.Pos, err)
				}
				if port != nil {
					port.Pos, port.Origin = hpos, OriginYAML
				}
				var hvars *Map
				switch {
				case isFalsy(hv):
					hvars = NewMap()
				case hv.Kind == KindMap:
					hvars = hv.Map
				default:
					return "", fmt.Errorf("%s: Invalid data from file, expected dictionary and got:\n\n%s", hv.Pos, hv.Display())
				}
				for _, h := range hosts {
					if _, err := inv.addHost(h, g, port, hpos, hpos.File); err != nil {
						return "", fmt.Errorf("%s: %v", hv.Pos, err)
					}
					for _, k := range hvars.Keys {
						if err := inv.setVariable(h, k, hvars.Values[k]); err != nil {
							return "", fmt.Errorf("%s: %v", hvars.Values[k].Pos, err)
						}
					}
				}
			}
		default:
			inv.warnf("%s: Skipping unexpected key (%s) in group (%s), only \"vars\", \"children\" and \"hosts\" are valid", sv.Pos, key, name)
		}
	}
	return name, nil
}
