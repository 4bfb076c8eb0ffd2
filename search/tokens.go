package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens returns the terms of text in order, duplicates kept. A word is a
// run of letters, digits, '_' and '-'; anything else (spaces, '.', '/',
// punctuation) separates words, so a dotted id gives one word per segment.
// A word is cut into parts at '_' and '-', at a lower-to-upper case change
// (addTag: add, tag) and before the last upper-case letter of a run
// followed by a lower-case one (getHTTPStatus: get, http, status). Each
// part is a term; a word of several parts also gives its parts joined
// ("addtag"), so a query that writes the compound the same way scores
// higher. Terms are lower-cased, Latin letters lose their diacritics
// (Zoë: zoe, naïve: naive), and then:
//   - a term of one byte is dropped unless it is a digit, and one of more
//     than MaxTermBytes is dropped;
//   - the stop words (the, a, an, of, to, and, or, for, in, on, with, is,
//     be) are dropped;
//   - a light stemmer removes a plural or a verb ending (see Stem).
//
// Scripts written without spaces (日本語) give one term per run of
// letters: a query must name the run.
func Tokens(text string) []string {
	var out []string
	appendTokens(text, func(t string) { out = append(out, t) })
	return out
}

// appendTokens calls emit for every term of text, in order.
func appendTokens(text string, emit func(string)) {
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r) {
				break
			}
			j += n
		}
		word(text[i:j], emit)
		i = j
	}
}

func isWordRune(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// word emits the terms of one word.
func word(w string, emit func(string)) {
	var parts []string
	start := -1
	var prev rune
	runes := []rune(w)
	for k, r := range runes {
		if r == '_' || r == '-' {
			if start >= 0 {
				parts = append(parts, string(runes[start:k]))
				start = -1
			}
			prev = r
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			next := rune(0)
			if k+1 < len(runes) {
				next = runes[k+1]
			}
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				parts = append(parts, string(runes[start:k]))
				start = k
			}
		}
		if start < 0 {
			start = k
		}
		prev = r
	}
	if start >= 0 {
		parts = append(parts, string(runes[start:]))
	}
	var joined strings.Builder
	for _, p := range parts {
		t := normalize(p)
		joined.WriteString(t)
		if t = term(t); t != "" {
			emit(t)
		}
	}
	if len(parts) > 1 {
		if t := term(joined.String()); t != "" {
			emit(t)
		}
	}
}

// normalize lower-cases s and removes the diacritics of Latin letters.
func normalize(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || 'A' <= s[i] && s[i] <= 'Z' {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) {
			continue // a combining mark: its base letter stays
		}
		r = unicode.ToLower(r)
		if f, ok := fold[r]; ok {
			b.WriteString(f)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MaxTermBytes is the longest term kept: a longer run of letters is no
// word anyone searches for.
const MaxTermBytes = 128

// term applies the length rules, the stop list and the stemmer; "" drops.
func term(t string) string {
	if len(t) == 1 && !(t[0] >= '0' && t[0] <= '9') || t == "" || len(t) > MaxTermBytes {
		return ""
	}
	if stopWords[t] {
		return ""
	}
	return Stem(t)
}

var stopWords = map[string]bool{
	"the": true, "a": true, "an": true, "of": true, "to": true, "and": true, "or": true,
	"for": true, "in": true, "on": true, "with": true, "is": true, "be": true,
}

// Stem removes one English ending from an ASCII-ending term, the same way
// for documents and queries: "ies" → "y" (entries: entry), "sses" → "ss",
// "es" after s, x, z, ch or sh (boxes: box), a final "s" but not after s,
// u or i (tags: tag; status, class, analysis stay); "ing" and "ed" when at
// least three letters with a vowel stay (tagging: tag, added: add, running: run), then
// a doubled final consonant other than l, s or z is undone when three
// letters stay (tagg: tag, but add stays). Nothing else: it is meant to
// join the forms of a word, not to find its root.
func Stem(t string) string {
	n := len(t)
	switch {
	case n > 4 && strings.HasSuffix(t, "ies"):
		return t[:n-3] + "y"
	case n > 4 && strings.HasSuffix(t, "sses"):
		return t[:n-2]
	case n > 4 && (strings.HasSuffix(t, "ches") || strings.HasSuffix(t, "shes")):
		return t[:n-2]
	case n > 3 && (strings.HasSuffix(t, "xes") || strings.HasSuffix(t, "zes")):
		return t[:n-2]
	case n > 3 && t[n-1] == 's' && !strings.ContainsRune("sui", rune(t[n-2])):
		return t[:n-1]
	case n >= 6 && strings.HasSuffix(t, "ing") && hasVowel(t[:n-3]):
		return undouble(t[:n-3])
	case n >= 5 && strings.HasSuffix(t, "ed") && t[n-3] != 'e' && hasVowel(t[:n-2]):
		return undouble(t[:n-2])
	}
	return t
}

func undouble(t string) string {
	n := len(t)
	if n >= 4 && t[n-1] == t[n-2] && isConsonant(t[n-1]) && !strings.ContainsRune("lsz", rune(t[n-1])) {
		return t[:n-1]
	}
	return t
}

func hasVowel(s string) bool { return strings.ContainsAny(s, "aeiouy") }

func isConsonant(c byte) bool {
	return c >= 'a' && c <= 'z' && !strings.ContainsRune("aeiouy", rune(c))
}

// fold maps the precomposed Latin letters with diacritics (after
// lower-casing) to their base letters.
var fold = func() map[rune]string {
	m := map[rune]string{}
	for base, letters := range map[string]string{
		"a": "àáâãäåāăą", "c": "çćĉċč", "d": "ďđ", "e": "èéêëēĕėęě", "g": "ĝğġģ", "h": "ĥħ",
		"i": "ìíîïĩīĭįı", "j": "ĵ", "k": "ķ", "l": "ĺļľŀł", "n": "ñńņňŉ", "o": "òóôõöøōŏő",
		"r": "ŕŗř", "s": "śŝşš", "t": "ţťŧ", "u": "ùúûüũūŭůűų", "w": "ŵ", "y": "ýÿŷ", "z": "źżž",
		"ss": "ß", "ae": "æ", "oe": "œ", "th": "þ",
	} {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()
