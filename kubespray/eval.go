package kubespray

import (
	"math/big"

	"github.com/layercheck/layercheck/kubespray/internal/scan"
	"github.com/layercheck/layercheck/parser"
)

// Outcome is the result of evaluating an Assert on inventory values.
type Outcome int

// Outcomes of Catalogue.Eval.
const (
	// Unknown: a value the assert needs is templated, undefined, or not of
	// the type the test needs; only a run would tell.
	Unknown Outcome = iota
	// Pass: kubespray's assert holds.
	Pass
	// Fail: kubespray stops with the assert's Msg.
	Fail
	// NotApplicable: a When condition is false, kubespray skips the assert.
	NotApplicable
)

// String is the outcome's name: unknown, pass, fail, not-applicable.
func (o Outcome) String() string {
	if o < Unknown || o > NotApplicable {
		return "Outcome(" + itoa(int(o)) + ")"
	}
	return [...]string{"unknown", "pass", "fail", "not-applicable"}[o]
}

// Lookup gives a host's value of a variable as the lint resolved it
// (inventory, group_vars, host_vars, extra vars): a *parser.Value, or a
// plain Go value (bool, string, int, int64, float64, nil). ok is false
// when the inventory does not set it; Eval then uses kubespray's default.
type Lookup func(name string) (v any, ok bool)

// Eval evaluates a against the values lookup gives, falling back to the
// catalogue's defaults for variables the inventory does not set (a
// templated or inferred default counts as unknown).
func (c *Catalogue) Eval(a Assert, lookup Lookup) Outcome {
	if c == nil {
		c = &Catalogue{}
	}
	get := func(name string) (any, bool) {
		if lookup != nil {
			if v, ok := lookup(name); ok {
				return plain(v), true
			}
		}
		if v := c.Vars[name]; v != nil {
			if len(v.Defs) > 0 && v.Defs[0].DefaultOmitted {
				return templated{}, true // not kept: unknown
			}
			// A Jinja default (templated, or an inferred bool) is unknown.
			return plain(v.Default), true
		}
		return nil, false
	}
	unknown := false
	for _, w := range a.When {
		switch evalCond(w, get) {
		case cFalse:
			return NotApplicable
		case cUnknown:
			unknown = true
		}
	}
	thatUnknown := false
	for _, t := range a.That {
		switch evalCond(t, get) {
		case cTrue:
			return Pass
		case cUnknown:
			thatUnknown = true
		}
	}
	if unknown || thatUnknown {
		return Unknown
	}
	return Fail
}

type tri int

const (
	cUnknown tri = iota
	cTrue
	cFalse
)

func triOf(b bool) tri {
	if b {
		return cTrue
	}
	return cFalse
}

// templated stands for a value Ansible renders at run time.
type templated struct{}

// plain turns a *parser.Value into a Go value; templated strings and vault
// values become templated{} (unknown until run time).
func plain(v any) any {
	pv, ok := v.(*parser.Value)
	if !ok {
		if s, ok := v.(string); ok && scan.IsTemplated(s) {
			return templated{}
		}
		return v
	}
	if pv == nil {
		return nil
	}
	switch pv.Kind {
	case parser.KindString:
		if pv.Templated() {
			return templated{}
		}
	case parser.KindList, parser.KindMap, parser.KindVault:
		return templated{} // not compared by any Cond
	}
	return scan.PlainValue(pv, nil)
}

func evalCond(c Cond, get func(string) (any, bool)) tri {
	v, ok := get(c.Var)
	if c.Op == OpUnset {
		return triOf(!ok)
	}
	if !ok {
		return cUnknown
	}
	if _, t := v.(templated); t {
		return cUnknown
	}
	switch c.Op {
	case OpTrue, OpFalse:
		b, isBool := v.(bool)
		if !isBool {
			// ansible-core 2.19 fails a conditional that is not a bool.
			return cUnknown
		}
		return triOf(b == (c.Op == OpTrue))
	case OpIsBool:
		_, isBool := v.(bool)
		return triOf(isBool)
	case OpIn, OpNotIn:
		in := false
		for _, want := range c.Values {
			if pyEqual(v, want) {
				in = true
				break
			}
		}
		return triOf(in == (c.Op == OpIn))
	}
	return cUnknown
}

// pyEqual is Python's == on the scalars Conds compare: a str equals only
// a str; bools and numbers compare by value (True == 1).
func pyEqual(a, b any) bool {
	as, aStr := a.(string)
	bs, bStr := b.(string)
	if aStr || bStr {
		return aStr && bStr && as == bs
	}
	af, aok := num(a)
	bf, bok := num(b)
	if aok && bok {
		return af == bf
	}
	return a == nil && b == nil
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f, true
	}
	return 0, false
}
