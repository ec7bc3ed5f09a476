package parser

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Host patterns as ansible-core's parsing/utils/addresses.py (parse_address)
// and plugins/inventory/__init__.py (expand_hostname_range) read them.

const (
	numericRange  = `\[(?:[0-9]+:[0-9]+)(?::[0-9]+)?\]`
	hexRange      = `\[(?:[0-9a-f]+:[0-9a-f]+)(?::[0-9]+)?\]`
	alphanumRange = `\[(?:[a-z]:[a-z]|[0-9]+:[0-9]+)(?::[0-9]+)?\]`
	ipv6Component = `(?:[0-9a-f]{1,4}|` + hexRange + `)`
	ipv4Component = `(?:[01]?[0-9]{1,2}|2[0-4][0-9]|25[0-5]|` + numericRange + `)`
)

var (
	reBracketedHostPort = regexp.MustCompile(`^\[(.+)\]:([0-9]+)$`)
	reHostPort          = regexp.MustCompile(`^((?:[^:\[\]]|\[[^\]]*\])*):([0-9]+)$`)
	reIPv4              = regexp.MustCompile(`(?i)^(?:` + ipv4Component + `\.){3}` + ipv4Component + `$`)
	reRangeAtom         = regexp.MustCompile(`(?i)^` + alphanumRange)
)

// reIPv6 is compiled when first needed (a host that is neither a hostname
// nor an IPv4 address): compiling it took a millisecond of every start.
var reIPv6 = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^((?:` + ipv6Component + `:){7}` + ipv6Component + `|` +
		`(?:` + ipv6Component + `:){1,6}:|` +
		`(?:` + ipv6Component + `:)(?::` + ipv6Component + `){1,6}|` +
		`(?:` + ipv6Component + `:){2}(?::` + ipv6Component + `){1,5}|` +
		`(?:` + ipv6Component + `:){3}(?::` + ipv6Component + `){1,4}|` +
		`(?:` + ipv6Component + `:){4}(?::` + ipv6Component + `){1,3}|` +
		`(?:` + ipv6Component + `:){5}(?::` + ipv6Component + `){1,2}|` +
		`(?:` + ipv6Component + `:){6}(?::` + ipv6Component + `)|` +
		`:(?::` + ipv6Component + `){1,6}|` +
		ipv6Component + `?::|` +
		`(?:0:){6}(?:` + ipv6Component + `\.){3}` + ipv6Component + `|` +
		`::(?:ffff:)?(?:` + ipv6Component + `\.){3}` + ipv6Component + `|` +
		`(?:0:){5}ffff:(?:` + ipv6Component + `\.){3}` + ipv6Component + `)$`)
})

// isHostnameLabel checks Ansible's label regex:
// (?:[\w]|range)(?:[\w_-]|range)*(?<![_-]) (case-insensitive, Unicode \w).
func isHostnameLabel(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	first := true
	lastDash := false
	for i < len(s) {
		if s[i] == '[' {
			m := reRangeAtom.FindString(s[i:])
			if m == "" {
				return false
			}
			i += len(m)
			first, lastDash = false, false
			continue
		}
		r, size := utf8DecodeRune(s[i:])
		switch {
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Nd, r):
			lastDash = r == '_'
		case r == '-' && !first:
			lastDash = true
		default:
			return false
		}
		first = false
		i += size
	}
	return !lastDash
}

func isHostname(s string) bool {
	// labels separated by '.', but '.' may not split a range
	depth := 0
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '.':
			if depth == 0 {
				if !isHostnameLabel(s[start:i]) {
					return false
				}
				start = i + 1
			}
		}
	}
	return isHostnameLabel(s[start:])
}

// parseAddress is parse_address(address, allow_ranges): host and port (nil
// when none), or an error for something that is not a host identifier.
func parseAddress(address string, allowRanges bool) (string, *Value, error) {
	var port *Value
	for _, re := range []*regexp.Regexp{reBracketedHostPort, reHostPort} {
		if !strings.Contains(address, ":") {
			break // both patterns need the colon before a port
		}
		if m := re.FindStringSubmatch(address); m != nil {
			address = m[1]
			n, ok := new(big.Int).SetString(m[2], 10)
			if ok {
				port = &Value{Kind: KindInt, Int: n, Raw: m[2]}
			}
		}
	}
	// Ansible tries ipv4, ipv6 and hostname; any match will do, so try the
	// cheap hostname check first
	if !(isHostname(address) || reIPv4.MatchString(address) || reIPv6().MatchString(address)) {
		return "", nil, fmt.Errorf("Not a valid network hostname: %s", address)
	}
	if !allowRanges && strings.Contains(address, "[") {
		return "", nil, errors.New("Detected range in host but was asked to ignore ranges")
	}
	return address, port, nil
}

// maxRangeHosts bounds what one host pattern may expand to (Ansible has no
// bound; no real inventory comes near it, a typo like web[1:10000000] does).
const maxRangeHosts = 100_000

// expandHostPattern is BaseInventoryPlugin._expand_hostpattern.
func expandHostPattern(pattern string) ([]string, *Value, error) {
	host, port, err := parseAddress(pattern, true)
	if err != nil {
		host, port = pattern, nil
	}
	if !strings.Contains(host, "[") {
		return []string{host}, port, nil
	}
	var out []string
	if err := expandHostnameRange(host, &out); err != nil {
		return nil, nil, err
	}
	return out, port, nil
}

const asciiLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// expandHostnameRange is expand_hostname_range: the first [begin:end(:step)]
// is expanded, then the rest recursively.
func expandHostnameRange(line string, out *[]string) error {
	s := strings.Replace(line, "[", "|", 1)
	s = strings.Replace(s, "]", "|", 1)
	parts := strings.Split(s, "|")
	if len(parts) != 3 {
		return fmt.Errorf("host range in %q: expected one [begin:end] per range", line)
	}
	head, nrange, tail := parts[0], parts[1], parts[2]
	bounds := strings.Split(nrange, ":")
	if len(bounds) != 2 && len(bounds) != 3 {
		return errors.New("host range must be begin:end or begin:end:step")
	}
	beg, end := bounds[0], bounds[1]
	step := "1"
	if len(bounds) == 3 {
		step = bounds[2]
	}
	if beg == "" {
		beg = "0"
	}
	if end == "" {
		return errors.New("host range must specify end value")
	}
	// fill appends x to b, zero-padded to rlen as Python's str.zfill
	// (rlen 0: no padding)
	rlen := 0
	if beg[0] == '0' && len(beg) > 1 {
		rlen = len(beg)
		if rlen != len(end) {
			return errors.New("host range must specify equal-length begin and end formats")
		}
	}
	fill := func(b []byte, x []byte) []byte {
		if len(x) >= rlen {
			return append(b, x...)
		}
		if len(x) > 0 && x[0] == '-' {
			b = append(b, '-')
			for i := 0; i < rlen-len(x); i++ {
				b = append(b, '0')
			}
			return append(b, x[1:]...)
		}
		for i := 0; i < rlen-len(x); i++ {
			b = append(b, '0')
		}
		return append(b, x...)
	}
	// each name is built in one buffer and becomes one string: a range
	// of 100,000 hosts makes 100,000 strings, not three times as many
	var name, num []byte
	emit := func(r []byte) error {
		name = append(name[:0], head...)
		name = fill(name, r)
		name = append(name, tail...)
		if bytes.IndexByte(name, '[') >= 0 {
			if err := expandHostnameRange(string(name), out); err != nil {
				return err
			}
		} else {
			*out = append(*out, string(name))
		}
		if len(*out) > maxRangeHosts {
			return fmt.Errorf("host pattern %q expands to more than %d hosts", line, maxRangeHosts)
		}
		return nil
	}
	ib, iberr := strings.Index(asciiLetters, beg), error(nil)
	ie := strings.Index(asciiLetters, end)
	if ib < 0 || ie < 0 {
		iberr = errors.New("not alpha")
	}
	if iberr == nil {
		if ib > ie {
			return errors.New("host range must have begin <= end")
		}
		st, err := pyIntStr(step)
		if err != nil || st == 0 {
			// int(step) fails: Python falls back to a numeric range, which fails too
			return fmt.Errorf("invalid literal for int() with base 10: %q", beg)
		}
		if st < 0 {
			return nil // empty slice
		}
		// ascii_letters[i_beg:i_end+1:step]
		for i := ib; i < ie+1 && i < len(asciiLetters); i += int(st) {
			if err := emit([]byte{asciiLetters[i]}); err != nil {
				return err
			}
		}
	} else {
		b, err1 := pyIntStr(beg)
		e, err2 := pyIntStr(end)
		st, err3 := pyIntStr(step)
		if err1 != nil || err2 != nil || err3 != nil {
			return fmt.Errorf("invalid literal for int() with base 10 in host range [%s]", nrange)
		}
		if st == 0 {
			return errors.New("range() arg 3 must not be zero")
		}
		span := new(big.Int).Sub(big.NewInt(e), big.NewInt(b)) // e - b, without overflow
		if st < 0 {
			span.Neg(span)
		}
		if span.Cmp(big.NewInt(maxRangeHosts*absInt64(st))) > 0 || e == math.MaxInt64 || b == math.MaxInt64 || e == math.MinInt64 || b == math.MinInt64 {
			return fmt.Errorf("host range [%s] expands to more than %d hosts", nrange, maxRangeHosts)
		}
		if !strings.Contains(tail, "[") && span.Sign() >= 0 { // the names to come: room for them at once
			*out = slices.Grow(*out, int(span.Int64()/absInt64(st))+1)
		}
		for i := b; (st > 0 && i < e+1) || (st < 0 && i > e+1); i += st {
			num = strconv.AppendInt(num[:0], i, 10)
			if err := emit(num); err != nil {
				return err
			}
		}
	}
	return nil
}

func absInt64(n int64) int64 {
	if n < 0 {
		if n == math.MinInt64 {
			return math.MaxInt64 / maxRangeHosts
		}
		return -n
	}
	if n > math.MaxInt64/maxRangeHosts {
		return math.MaxInt64 / maxRangeHosts
	}
	return n
}

// pyIntStr is Python's int(str): surrounding whitespace, a sign and "_"
// between digits allowed.
func pyIntStr(s string) (int64, error) {
	s = strings.TrimSpace(s)
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || !digitsOK(body, isDec) {
		return 0, errors.New("invalid int")
	}
	return strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
}

func utf8DecodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }
