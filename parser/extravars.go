package parser

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ParseExtraVars parses -e arguments in order (later ones win, as in
// Ansible): "k=v k2=v2" (strings), "@file" (YAML/JSON), or inline JSON/YAML.
//
// This is ansible-core's load_extra_vars: "@file" is loaded as a vars file
// (Pos file:line:col); an argument starting with "{" or "[" is JSON, else
// YAML (Pos File "-e"); anything else goes through parse_kv, so every value
// is a str (Origin OriginExtraKV, Pos File "-e"), quotes around a value are
// removed, \n-style escapes decoded, and words without "=" are collected
// in "_raw_params". An argument starting with "/" or "." is an error, as is
// data that is not a dict. Later arguments replace earlier keys whole.
func ParseExtraVars(args []string) (*Map, error) {
	out := NewMap()
	for _, arg := range args {
		if arg == "" {
			continue
		}
		var data *Value
		var err error
		switch {
		case strings.HasPrefix(arg, "@"):
			path := arg[1:]
			b, rerr := ReadFile(path, 0)
			if rerr != nil {
				var ke *FileKindError
				var se *FileSizeError
				if errors.As(rerr, &ke) || errors.As(rerr, &se) {
					return nil, fmt.Errorf("-e %s: %w", arg, rerr)
				}
				return nil, fmt.Errorf("-e %s: %v", arg, rerr)
			}
			if isVault(b) {
				return nil, fmt.Errorf("%s: whole-file ansible-vault extra vars cannot be read without the vault password", path)
			}
			data, err = loadData(path, b, nil)
		case arg[0] == '/' || arg[0] == '.':
			return nil, fmt.Errorf("Please prepend extra_vars filename '%s' with '@'", arg)
		case arg[0] == '[' || arg[0] == '{':
			data, err = loadData(ExtraVarsFile, []byte(arg), nil)
			if err == nil && data != nil {
				inlinePos(data)
			}
		default:
			var m *Map
			m, err = parseKV(arg)
			if err == nil {
				data = &Value{Kind: KindMap, Map: m, Pos: Pos{File: ExtraVarsFile}, Origin: OriginExtraKV}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("-e %q: %w", arg, err)
		}
		if data == nil || data.Kind != KindMap {
			return nil, fmt.Errorf("Invalid extra vars data supplied. '%s' could not be made into a dictionary", arg)
		}
		merge(out, data.Map)
	}
	return out, nil
}

// inlinePos gives values of an inline -e '{...}' the Pos File "-e": their
// line:col are within the argument, not a file.
func inlinePos(v *Value) {
	v.Pos = Pos{File: ExtraVarsFile}
	for _, it := range v.List {
		inlinePos(it)
	}
	if v.Map != nil {
		for _, k := range v.Map.Keys {
			inlinePos(v.Map.Values[k])
		}
		v.Map.keyPos = nil
	}
}

var reEscape = regexp.MustCompile(`\\U[a-fA-F0-9]{8}|\\u[a-fA-F0-9]{4}|\\x[a-fA-F0-9]{2}|\\N\{[^}]+\}|\\[\\'"abfnrtv]`)

// decodeEscapes is splitter._decode_escapes.
func decodeEscapes(s string) string {
	return reEscape.ReplaceAllStringFunc(s, func(m string) string {
		switch m[1] {
		case 'U', 'u', 'x':
			n, err := strconv.ParseUint(m[2:], 16, 32)
			if err != nil {
				return m
			}
			return string(rune(n))
		case 'N':
			return m // named characters are not decoded here
		case 'a':
			return "\a"
		case 'b':
			return "\b"
		case 'f':
			return "\f"
		case 'n':
			return "\n"
		case 'r':
			return "\r"
		case 't':
			return "\t"
		case 'v':
			return "\v"
		}
		return m[1:]
	})
}

// parseKV is splitter.parse_kv(args, check_raw=False).
func parseKV(args string) (*Map, error) {
	out := NewMap()
	vargs, err := splitArgs(args)
	if err != nil {
		return nil, err
	}
	var raw []string
	for _, orig := range vargs {
		x := decodeEscapes(orig)
		if !strings.Contains(x, "=") {
			raw = append(raw, orig)
			continue
		}
		pos := 0
		found := false
		for {
			i := strings.Index(x[pos+1:], "=")
			if i < 0 {
				break
			}
			pos = pos + 1 + i
			if x[pos-1] != '\\' {
				found = true
				break
			}
		}
		if !found {
			raw = append(raw, strings.ReplaceAll(x, `\=`, "="))
			continue
		}
		k, v := strings.TrimSpace(x[:pos]), unquote(strings.TrimSpace(x[pos+1:]))
		out.Set(k, &Value{Kind: KindString, Str: v, Raw: v, Pos: Pos{File: ExtraVarsFile}, Origin: OriginExtraKV})
	}
	if len(raw) > 0 {
		j := joinArgs(raw)
		out.Set("_raw_params", &Value{Kind: KindString, Str: j, Raw: j, Pos: Pos{File: ExtraVarsFile}, Origin: OriginExtraKV})
	}
	return out, nil
}

func unquote(s string) string {
	if len(s) > 1 && s[0] == s[len(s)-1] && (s[0] == '"' || s[0] == '\'') && s[len(s)-2] != '\\' {
		return s[1 : len(s)-1]
	}
	return s
}

func joinArgs(parts []string) string {
	var sb strings.Builder
	for _, p := range parts {
		if sb.Len() == 0 || strings.HasSuffix(sb.String(), "\n") {
			sb.WriteString(p)
		} else {
			sb.WriteString(" " + p)
		}
	}
	return sb.String()
}

func quoteState(token string, q rune) rune {
	var prev rune
	for i, c := range token {
		if i > 0 {
			prev = rune(token[i-1])
		}
		if (c == '"' || c == '\'') && prev != '\\' {
			if q != 0 {
				if c == q {
					q = 0
				}
			} else {
				q = c
			}
		}
	}
	return q
}

func jinjaDepth(token string, depth int, open, close string) int {
	no, nc := strings.Count(token, open), strings.Count(token, close)
	if no != nc {
		depth += no - nc
		if depth < 0 {
			depth = 0
		}
	}
	return depth
}

// splitArgs is splitter.split_args: split on spaces, keeping quoted
// strings and Jinja blocks together.
func splitArgs(args string) ([]string, error) {
	if args == "" {
		return nil, nil
	}
	var params []string
	items := strings.Split(args, "\n")
	var q rune
	inside := false
	pd, bd, cd := 0, 0, 0
	for itemIdx, item := range items {
		tokens := strings.Split(item, " ")
		cont := false
		for idx, tok := range tokens {
			if tok == "" && idx != 0 {
				if len(params) == 0 {
					params = append(params, "")
				}
				params[len(params)-1] += " "
				continue
			}
			if tok == "\\" && !inside {
				cont = true
				continue
			}
			was := inside
			q = quoteState(tok, q)
			inside = q != 0
			appended := false
			if inside && !was && pd == 0 && bd == 0 && cd == 0 {
				params = append(params, tok)
				appended = true
			} else if pd != 0 || bd != 0 || cd != 0 || inside || was {
				if len(params) == 0 {
					params = append(params, "")
				}
				if idx == 0 && was {
					params[len(params)-1] += tok
				} else {
					sp := ""
					if idx > 0 {
						sp = " "
					}
					params[len(params)-1] += sp + tok
				}
				appended = true
			}
			prev := pd
			pd = jinjaDepth(tok, pd, "{{", "}}")
			if pd != prev && !appended {
				params = append(params, tok)
				appended = true
			}
			prev = bd
			bd = jinjaDepth(tok, bd, "{%", "%}")
			if bd != prev && !appended {
				params = append(params, tok)
				appended = true
			}
			prev = cd
			cd = jinjaDepth(tok, cd, "{#", "#}")
			if cd != prev && !appended {
				params = append(params, tok)
				appended = true
			}
			if pd == 0 && bd == 0 && cd == 0 && !inside && !appended && tok != "" {
				params = append(params, tok)
			}
		}
		if len(items) > 1 && itemIdx != len(items)-1 && !cont {
			if len(params) == 0 {
				params = append(params, "")
			}
			params[len(params)-1] += "\n"
		}
	}
	if pd != 0 || bd != 0 || cd != 0 || inside {
		return nil, fmt.Errorf("failed at splitting arguments, either an unbalanced jinja2 block or quotes: %s", args)
	}
	return params, nil
}
