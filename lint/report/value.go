package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/parser"
)

// vaultKey marks a vault-encrypted value in the JSON the action plugin
// sends: {"__ansible_vault": ""}, never with the ciphertext.
const vaultKey = "__ansible_vault"

// maxDepth bounds nesting, so a hostile argument file cannot exhaust the stack.
const maxDepth = 200

// decodeValue turns the JSON of a Python value (json.dumps of what Ansible
// loaded) into a parser.Value, keeping the Python type: a JSON number with
// '.', 'e' or 'E' is a float (Python writes floats so), any other an int of
// any size; objects keep their key order.
func decodeValue(raw json.RawMessage) (*parser.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeNext(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the value")
	}
	return v, nil
}

func decodeNext(dec *json.Decoder, depth int) (*parser.Value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested deeper than %d levels", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("bad JSON value: %w", err)
	}
	switch t := tok.(type) {
	case nil:
		return &parser.Value{Kind: parser.KindNull, Raw: "null"}, nil
	case bool:
		return &parser.Value{Kind: parser.KindBool, Bool: t, Raw: strconv.FormatBool(t)}, nil
	case string:
		return &parser.Value{Kind: parser.KindString, Str: t, Raw: t}, nil
	case json.Number:
		s := t.String()
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("bad float %s: %w", s, err)
			}
			return &parser.Value{Kind: parser.KindFloat, Float: f, Raw: s}, nil
		}
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("bad int %s", s)
		}
		return &parser.Value{Kind: parser.KindInt, Int: n, Raw: s}, nil
	case json.Delim:
		switch t {
		case '[':
			v := &parser.Value{Kind: parser.KindList, List: []*parser.Value{}}
			for dec.More() {
				e, err := decodeNext(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.List = append(v.List, e)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("bad JSON list: %w", err)
			}
			return v, nil
		case '{':
			m := parser.NewMap()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("bad JSON object: %w", err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("bad JSON object key %v", kt)
				}
				e, err := decodeNext(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m.Set(k, e)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("bad JSON object: %w", err)
			}
			if m.Len() == 1 && m.Keys[0] == vaultKey {
				return &parser.Value{Kind: parser.KindVault}, nil
			}
			return &parser.Value{Kind: parser.KindMap, Map: m}, nil
		}
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// parsePos reads "file:line:col" (Ansible's Origin), "file:line" or "file".
func parsePos(s string) parser.Pos {
	p := parser.Pos{File: s}
	var nums []int
	for i := 0; i < 2; i++ {
		j := strings.LastIndexByte(p.File, ':')
		if j < 0 {
			break
		}
		n, err := strconv.Atoi(p.File[j+1:])
		if err != nil || n < 0 {
			break
		}
		nums = append([]int{n}, nums...)
		p.File = p.File[:j]
	}
	if len(nums) > 0 {
		p.Line = nums[0]
	}
	if len(nums) > 1 {
		p.Col = nums[1]
	}
	return p
}
