package parser

import (
	"errors"
	"strings"
)

// shlexSplit is Python's shlex.split(s, comments=True) in POSIX mode, which
// ansible-core's INI inventory plugin uses on host lines: quotes and
// backslash escapes as a POSIX shell, and "#" ends the line even in the
// middle of a word ("a=b#c" gives "a=b").
func shlexSplit(s string) ([]string, error) {
	if plainASCII(s) {
		// nothing to unquote, escape or cut: words between whitespace
		out := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\n' })
		if len(out) == 0 {
			return nil, nil
		}
		return out, nil
	}
	return shlexSplitQuoted(s)
}

// plainASCII reports whether s is ASCII without quotes, backslashes or
// "#": what most host lines are.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80, c == '\'', c == '"', c == '\\', c == '#':
			return false
		}
	}
	return true
}

// shlexSplitQuoted is shlexSplit for any line.
func shlexSplitQuoted(s string) ([]string, error) {
	const (
		stWhite = ' '
		stWord  = 'a'
		stEOF   = 0
	)
	isWhite := func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\n' }
	rs := []rune(s)
	i := 0
	var out []string
	state := rune(stWhite)
	for state != stEOF {
		// read one token
		var tok []rune
		quoted := false
		escapedState := rune(stWhite)
	token:
		for {
			var c rune
			eof := i >= len(rs)
			if !eof {
				c = rs[i]
				i++
			}
			switch {
			case state == stEOF:
				break token
			case state == stWhite:
				switch {
				case eof:
					state = stEOF
					break token
				case isWhite(c):
					if len(tok) > 0 || quoted {
						break token
					}
				case c == '#':
					for i < len(rs) && rs[i] != '\n' {
						i++
					}
					if i < len(rs) {
						i++
					}
				case c == '\\':
					escapedState = stWord
					state = '\\'
				case c == '\'' || c == '"':
					state = c
				default:
					tok = append(tok, c)
					state = stWord
				}
			case state == '\'' || state == '"':
				quoted = true
				switch {
				case eof:
					return nil, errors.New("No closing quotation")
				case c == state:
					state = stWord
				case c == '\\' && state == '"':
					escapedState = state
					state = '\\'
				default:
					tok = append(tok, c)
				}
			case state == '\\':
				if eof {
					return nil, errors.New("No escaped character")
				}
				if (escapedState == '\'' || escapedState == '"') && c != state && c != escapedState {
					tok = append(tok, state)
				}
				tok = append(tok, c)
				state = escapedState
			case state == stWord:
				switch {
				case eof:
					state = stEOF
					break token
				case isWhite(c):
					state = stWhite
					if len(tok) > 0 || quoted {
						break token
					}
				case c == '#':
					for i < len(rs) && rs[i] != '\n' {
						i++
					}
					if i < len(rs) {
						i++
					}
					state = stWhite
					if len(tok) > 0 || quoted {
						break token
					}
				case c == '\'' || c == '"':
					state = c
				case c == '\\':
					escapedState = stWord
					state = '\\'
				default:
					tok = append(tok, c)
				}
			}
		}
		if len(tok) == 0 && !quoted {
			continue // None: end of input
		}
		out = append(out, string(tok))
	}
	return out, nil
}
