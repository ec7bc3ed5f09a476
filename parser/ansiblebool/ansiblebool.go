// Package ansiblebool is how ansible-core reads a value as a boolean, in
// its two ways, per ansible-core series (2.16 to 2.20):
//
//   - Filter is Jinja's `| bool` (lib/ansible/plugins/filter/core.py,
//     to_bool), what a role writes in `when: x | bool` or in a module
//     argument "{{ x | bool }}". Its answer is the same in every series;
//     2.19 changed which values it takes without complaint: any other value
//     is coerced with a deprecation warning ("The `bool` filter coerced
//     invalid value ..."), to be refused in 2.23.
//   - Boolean is module_utils/parsing/convert_bool.py boolean(value,
//     strict=True), the same in every series: what a module's `type: bool`
//     argument (module_utils/common/validation.py check_type_bool) and a
//     playbook keyword of type bool (become, so ansible_become; run_once)
//     go through. It takes more spellings than the filter (y, t, n, f,
//     surrounding space) and refuses everything else.
//
// Values are the Go forms of what Ansible loads: nil (None), bool, int,
// int64, *big.Int, float64, string; any other value (a list, a map) is
// neither.
package ansiblebool

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Series are the ansible-core series this package knows, oldest first.
var Series = []string{"2.16", "2.17", "2.18", "2.19", "2.20"}

// Newest is the newest series in Series.
const Newest = "2.20"

// Reading is what `| bool` makes of a value under one series.
type Reading struct {
	// Value is the filter's result as a condition takes it.
	Value bool
	// Deprecated: the series coerces the value with a deprecation
	// warning (2.19 and later, for every value but the documented ones:
	// yes/on/true/1 and no/off/false/0 in any case, True/False, 1/0).
	Deprecated bool
	// None: the filter gives None, not a bool (before 2.19, for None),
	// which a condition takes as false.
	None bool
}

// Filter reads v as `| bool` does under ansible-core series (e.g.
// "2.18"). A series that does not parse is taken as Newest.
//
// Before 2.19 (core.py to_bool):
//
//	if a is None or isinstance(a, bool): return a
//	if isinstance(a, string_types): a = a.lower()
//	if a in ('yes', 'on', '1', 'true', 1): return True
//	return False
//
// 2.19 and later: a str is lowered, an int (or bool) becomes str(v).lower();
// in {'yes', 'on', 'true', '1'} it is True, in {'no', 'off', 'false', '0'}
// False; anything else gives `value == 1` (False for a TypeError) with a
// deprecation warning.
func Filter(series string, v any) Reading {
	if !from219(series) {
		switch x := v.(type) {
		case nil:
			return Reading{None: true}
		case bool:
			return Reading{Value: x}
		case string:
			switch strings.ToLower(x) {
			case "yes", "on", "1", "true":
				return Reading{Value: true}
			}
			return Reading{}
		}
		return Reading{Value: isOne(v)}
	}
	var check string
	switch x := v.(type) {
	case string:
		check = strings.ToLower(x)
	case bool:
		check = strconv.FormatBool(x)
	default:
		i, ok := asInt(v)
		if !ok {
			// a float, None, a list or a map: `value == 1`, deprecated
			return Reading{Value: isOne(v), Deprecated: true}
		}
		check = i.String()
	}
	switch check {
	case "yes", "on", "true", "1":
		return Reading{Value: true}
	case "no", "off", "false", "0":
		return Reading{}
	}
	// a str == 1 is False
	return Reading{Deprecated: true}
}

// Documented reads v as `| bool` does, for the readers of options a role
// passes through `| bool`: it refuses the values ansible-core 2.19 and
// later coerce with a deprecation warning (and 2.23 is to refuse), as they
// are read as false (or None) where the operator may have meant true ("y",
// "1.0", 1.0). The answer is the same under every series; only 2.19 and
// later warn, so the refusal follows Newest.
func Documented(v any) (bool, error) {
	r := Filter(Newest, v)
	if !r.Deprecated {
		return r.Value, nil
	}
	return false, DeprecatedError{v}
}

// DeprecatedError is Documented's refusal of a value.
type DeprecatedError struct{ Value any }

func (e DeprecatedError) Error() string {
	old := Filter(Series[0], e.Value)
	was := "false"
	switch {
	case old.None:
		was = "None (false)"
	case old.Value:
		was = "true"
	}
	return fmt.Sprintf("`| bool` reads it as %s, and ansible-core 2.19 and later only with a deprecation warning (2.23 refuses it); write true or false", was)
}

// Boolean reads v as convert_bool.boolean(v, strict=True) does:
//
//	BOOLEANS_TRUE = frozenset(('y', 'yes', 'on', '1', 'true', 't', 1, 1.0, True))
//	BOOLEANS_FALSE = frozenset(('n', 'no', 'off', '0', 'false', 'f', 0, 0.0, False))
//
// a str is lowered and stripped first. Anything else is an error.
func Boolean(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "y", "yes", "on", "1", "true", "t":
			return true, nil
		case "n", "no", "off", "0", "false", "f":
			return false, nil
		}
	case float64:
		if x == 1 || x == 0 {
			return x == 1, nil
		}
	default:
		if i, ok := asInt(v); ok && i.IsInt64() && (i.Int64() == 0 || i.Int64() == 1) {
			return i.Int64() == 1, nil
		}
	}
	return false, NotBooleanError{v}
}

// NotBooleanError is Boolean's refusal of a value.
type NotBooleanError struct{ Value any }

func (e NotBooleanError) Error() string {
	v := fmt.Sprint(e.Value)
	if s, ok := e.Value.(string); ok {
		v = strconv.Quote(s)
	}
	return fmt.Sprintf("%s is not a valid boolean: Ansible takes y, yes, on, 1, true, t, n, no, off, 0, false, f (any case), the ints 1 and 0 and the floats 1.0 and 0.0", v)
}

// isOne is Python's `v == 1` for an int, float or bool; false otherwise.
func isOne(v any) bool {
	if f, ok := v.(float64); ok {
		return f == 1
	}
	i, ok := asInt(v)
	return ok && i.IsInt64() && i.Int64() == 1
}

func asInt(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case int:
		return big.NewInt(int64(x)), true
	case int64:
		return big.NewInt(x), true
	case *big.Int:
		if x == nil {
			return new(big.Int), true
		}
		return x, true
	}
	return nil, false
}

// from219 reports whether series is 2.19 or later (Newest when it does
// not parse).
func from219(series string) bool {
	maj, min, ok := strings.Cut(series, ".")
	min, _, _ = strings.Cut(min, ".") // "2.19.3"
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if !ok || err1 != nil || err2 != nil {
		return true
	}
	return a > 2 || a == 2 && b >= 19
}
