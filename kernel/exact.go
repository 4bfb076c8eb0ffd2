package kernel

import "strings"

// exact is a JSON number held exactly: 0.digits × 10^exp, digits without
// leading or trailing zeros ("" is zero). Comparing two never builds the
// value, so a literal like 1e999999999 costs what its text costs.
type exact struct {
	neg    bool
	digits string
	exp    int64
}

// maxExp saturates exponents: no text within the JSON limits has that many
// digits, so every such number compares the same as the true one.
const maxExp = 1 << 40

// parseExact reads a JSON number literal (already checked as JSON).
func parseExact(lit string) (exact, bool) {
	var d exact
	s := lit
	if strings.HasPrefix(s, "-") {
		d.neg = true
		s = s[1:]
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 0 {
		return exact{}, false
	}
	intPart, frac := s[:i], ""
	s = s[i:]
	if strings.HasPrefix(s, ".") {
		j := 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == 1 {
			return exact{}, false
		}
		frac, s = s[1:j], s[j:]
	}
	var e int64
	if s != "" {
		if s[0] != 'e' && s[0] != 'E' {
			return exact{}, false
		}
		s = s[1:]
		eneg := false
		if s != "" && (s[0] == '+' || s[0] == '-') {
			eneg = s[0] == '-'
			s = s[1:]
		}
		if s == "" {
			return exact{}, false
		}
		for k := 0; k < len(s); k++ {
			if !isDigit(s[k]) {
				return exact{}, false
			}
			if e < maxExp {
				e = e*10 + int64(s[k]-'0')
			}
		}
		e = min(e, maxExp)
		if eneg {
			e = -e
		}
	}
	all := intPart + frac
	point := int64(len(intPart))
	lead := 0
	for lead < len(all) && all[lead] == '0' {
		lead++
	}
	all = all[lead:]
	point -= int64(lead)
	all = strings.TrimRight(all, "0")
	if all == "" {
		return exact{}, true // zero, sign ignored: -0 == 0
	}
	d.digits = all
	d.exp = point + e
	return d, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isInt reports whether d has no fractional part.
func (d exact) isInt() bool {
	return d.digits == "" || d.exp >= int64(len(d.digits))
}

// cmp returns -1, 0 or +1 as d is less than, equal to or greater than o.
func (d exact) cmp(o exact) int {
	ds, os := d.sign(), o.sign()
	if ds != os {
		if ds < os {
			return -1
		}
		return 1
	}
	if ds == 0 {
		return 0
	}
	c := 0
	switch {
	case d.exp != o.exp:
		c = 1
		if d.exp < o.exp {
			c = -1
		}
	default:
		c = strings.Compare(d.digits, o.digits)
	}
	return c * ds
}

func (d exact) sign() int {
	switch {
	case d.digits == "":
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// count returns a non-negative integer d as an int64, saturated; ok is
// false when d is negative or not an integer.
func (d exact) count() (n int64, ok bool) {
	if !d.isInt() || d.neg && d.digits != "" {
		return 0, false
	}
	if d.exp > 18 {
		return 1<<63 - 1, true
	}
	for i := int64(0); i < d.exp; i++ {
		n *= 10
		if i < int64(len(d.digits)) {
			n += int64(d.digits[i] - '0')
		}
	}
	return n, true
}
