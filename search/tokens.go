package search

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Tokens returns the terms of text in order, duplicates kept. A word is a
// run of letters, combining marks, digits, '_' and '-'; anything else (spaces, '.', '/',
// punctuation) separates words, so a dotted id gives one word per segment.
// A word is cut into parts at '_' and '-', at a lower-to-upper case change
// (addTag: add, tag) and before the last upper-case letter of a run
// followed by a lower-case one (getHTTPStatus: get, http, status). Each
// part is a term; a word of several parts also gives its parts joined
// ("addtag"), so a query that writes the compound the same way scores
// higher. Terms are lower-cased, Latin letters lose their diacritics
// (Zoë: zoe, naïve: naive; other scripts keep their marks, which are often
// vowels: कार्य stays whole), and then:
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

// isWordRune: combining marks of every kind are part of a word, since in
// scripts such as Devanagari, Bengali, Tamil or Thai they are its vowels.
func isWordRune(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

// word emits the terms of one word.
func word(w string, emit func(string)) {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			wordRunes(w, emit)
			return
		}
	}
	wordASCII(w, emit)
}

// wordASCII is wordRunes for a word of ASCII bytes, cut into substrings of
// it instead of copies: most words of tool objects are ASCII.
func wordASCII(w string, emit func(string)) {
	isUpper := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	isLower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	var room [8]string
	parts := room[:0]
	start := -1
	var prev byte
	for k := 0; k < len(w); k++ {
		c := w[k]
		if c == '_' || c == '-' {
			if start >= 0 {
				parts = append(parts, w[start:k])
				start = -1
			}
			prev = c
			continue
		}
		if start >= 0 && isUpper(c) {
			next := byte(0)
			if k+1 < len(w) {
				next = w[k+1]
			}
			if isLower(prev) || isDigit(prev) || (isUpper(prev) && isLower(next)) {
				parts = append(parts, w[start:k])
				start = k
			}
		}
		if start < 0 {
			start = k
		}
		prev = c
	}
	if start >= 0 {
		parts = append(parts, w[start:])
	}
	if len(parts) == 1 {
		if t := term(normalize(parts[0])); t != "" {
			emit(t)
		}
		return
	}
	var joined strings.Builder
	for _, p := range parts {
		t := normalize(p)
		joined.WriteString(t)
		if t = term(t); t != "" {
			emit(t)
		}
	}
	if t := term(joined.String()); t != "" {
		emit(t)
	}
}

// wordRunes emits the terms of one word of any script.
func wordRunes(w string, emit func(string)) {
	var parts []string
	start := -1
	var prev rune
	runes := []rune(w)
	for k, r := range runes {
		if unicode.Is(unicode.M, r) {
			if start < 0 {
				start = k
			}
			continue // a mark belongs to its letter: prev stays the letter
		}
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

// normalize lower-cases s and removes the diacritics of Latin letters,
// precomposed or as non-spacing marks after the letter; other scripts'
// marks stay.
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
	latin := false // the last letter was Latin
	folds := fold()
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) && latin {
			continue // a Latin letter's accent: its base letter stays
		}
		if !unicode.Is(unicode.M, r) {
			latin = unicode.Is(unicode.Latin, r)
		}
		r = unicode.ToLower(r)
		if f, ok := folds[r]; ok {
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
	if isStopWord(t) {
		return ""
	}
	return Stem(t)
}

func isStopWord(t string) bool {
	switch t {
	case "the", "a", "an", "of", "to", "and", "or", "for", "in", "on", "with", "is", "be":
		return true
	}
	return false
}

// Stem joins the English forms of a word, the same way for documents and
// queries, after the first steps of Porter's stemmer, on terms of ASCII
// letters only:
//   - plurals: "sses" → "ss", "ies" → "y" (entries: entry), a final "s"
//     but not after s, u or i (tags: tag; class, status, analysis stay);
//   - "ed" and "ing" when a vowel stays before them, then "e" comes back
//     after "at", "bl" or "iz" and after a short consonant-vowel-consonant
//     stem (named: name), and a doubled final consonant other than l, s or
//     z is undone when three letters stay (tagged: tag, but added: add);
//   - a final "e" goes when more than one vowel-consonant run stays, or one
//     that does not end consonant-vowel-consonant (archive, archived and
//     archiving: archiv; but note and name stay).
//
// It is meant to join the forms of a word, not to find its root.
func Stem(t string) string {
	for i := 0; i < len(t); i++ {
		if t[i] < 'a' || t[i] > 'z' {
			return t
		}
	}
	n := len(t)
	switch {
	case strings.HasSuffix(t, "sses"):
		t = t[:n-2]
	case n > 4 && strings.HasSuffix(t, "ies"):
		t = t[:n-3] + "y"
	case n > 3 && t[n-1] == 's' && !strings.ContainsRune("sui", rune(t[n-2])):
		t = t[:n-1]
	}
	for _, suf := range []string{"ed", "ing"} {
		stem, ok := strings.CutSuffix(t, suf)
		if !ok || strings.HasSuffix(t, "eed") || !hasVowel(stem) {
			continue
		}
		switch k := len(stem); {
		case strings.HasSuffix(stem, "at") || strings.HasSuffix(stem, "bl") || strings.HasSuffix(stem, "iz"):
			stem += "e"
		case k >= 4 && stem[k-1] == stem[k-2] && isConsonant(stem, k-1) && !strings.ContainsRune("lsz", rune(stem[k-1])):
			stem = stem[:k-1]
		case measure(stem) == 1 && cvc(stem):
			stem += "e"
		}
		t = stem
		break
	}
	if stem, ok := strings.CutSuffix(t, "e"); ok && len(stem) > 1 {
		if m := measure(stem); m > 1 || m == 1 && !cvc(stem) {
			t = stem
		}
	}
	return t
}

func hasVowel(s string) bool {
	for i := range len(s) {
		if !isConsonant(s, i) {
			return true
		}
	}
	return false
}

// isConsonant: s[i] is not a, e, i, o, u, nor a y after a consonant.
func isConsonant(s string, i int) bool {
	switch s[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !isConsonant(s, i-1)
	}
	return true
}

// measure is Porter's m: the number of vowel-consonant runs in s.
func measure(s string) int {
	m, vowel := 0, false
	for i := range len(s) {
		if c := isConsonant(s, i); !c {
			vowel = true
		} else if vowel {
			m++
			vowel = false
		}
	}
	return m
}

// cvc: s ends consonant, vowel, consonant, the last not w, x or y.
func cvc(s string) bool {
	k := len(s)
	return k >= 3 && isConsonant(s, k-1) && !isConsonant(s, k-2) && isConsonant(s, k-3) && !strings.ContainsRune("wxy", rune(s[k-1]))
}

// fold maps the precomposed Latin letters with diacritics (after
// lower-casing) to their base letters. It is built on first use, not at
// the start of every rukh process.
var fold = sync.OnceValue(func() map[rune]string {
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
})
