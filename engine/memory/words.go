package memory

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Keyword matching of the in-memory service, as google-adk 2.13's
// InMemoryMemoryService does it in Python: NFC-normalized text, Unicode
// \w+ words, str.lower(). NFC needs golang.org/x/text/unicode/norm (the
// standard library has no normalization); without it a query typed with
// precomposed accents would miss text stored with combining ones.

// isWordRune is Python's \w for str patterns: alphanumeric (letters of any
// category L, numbers of any category N) or underscore. Marks are not word
// characters there, so they split words, as in Python.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// pyLower is Python's str.lower(): the simple lowercase mapping, plus the
// two special cases Python applies, İ → i̇ (full mapping) and a capital
// sigma ending a word → ς (Final_Sigma, with cased and case-ignorable
// approximated by Unicode categories).
func pyLower(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range rs {
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ' && finalSigma(rs, i):
			b.WriteRune('ς')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma reports whether the capital sigma at rs[i] ends a word:
// preceded by a cased letter and not followed by one, case-ignorable
// characters skipped both ways.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	k := i + 1
	for k < len(rs) && caseIgnorable(rs[k]) {
		k++
	}
	return k == len(rs) || !cased(rs[k])
}

func cased(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }

func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', '\u00b7', '\u2018', '\u2019', '\u2024', '\u2027':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func normNFC(s string) string { return norm.NFC.String(s) }

// wordsLower is google-adk _extract_words_lower: the lowercased \w+ words
// of the NFC form of text, as a set.
func wordsLower(text string) map[string]struct{} {
	text = normNFC(text)
	words := map[string]struct{}{}
	start := -1
	for i, r := range text {
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			words[pyLower(text[start:i])] = struct{}{}
			start = -1
		}
	}
	if start >= 0 {
		words[pyLower(text[start:])] = struct{}{}
	}
	return words
}

// searchableWords is google-adk _extract_searchable_words: wordsLower plus,
// for a non-ASCII word, each run of Latin and each run of non-Latin
// characters in it, so that "Python" in 私はPythonを使う is a word of its own.
func searchableWords(text string) map[string]struct{} {
	words := wordsLower(text)
	var runs []string
	for w := range words {
		if isASCII(w) {
			continue
		}
		start, startLatin := 0, false
		for i, r := range w {
			l := isLatin(r)
			if i == 0 {
				startLatin = l
				continue
			}
			if l != startLatin {
				runs = append(runs, w[start:i])
				start, startLatin = i, l
			}
		}
		runs = append(runs, w[start:])
	}
	for _, r := range runs {
		words[r] = struct{}{}
	}
	return words
}

// isLatin is google-adk _is_latin: an ASCII word character, or a
// non-ASCII character whose Unicode name starts with "LATIN". That is the
// Latin script minus the Latin letters named otherwise (ordinal
// indicators, modifier and superscript letters, Roman numerals, fullwidth
// letters, ...), which notLatinNamed lists; a test checks the table
// against the Unicode names.
func isLatin(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	return unicode.Is(unicode.Latin, r) && !unicode.Is(notLatinNamed, r)
}

// notLatinNamed lists the letters and numbers of the Latin script whose
// Unicode names do not start with "LATIN" (Unicode 15).
var notLatinNamed = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00aa, Hi: 0x00ba, Stride: 0x10},
		{Lo: 0x02b0, Hi: 0x02b8, Stride: 1},
		{Lo: 0x02e0, Hi: 0x02e4, Stride: 1},
		{Lo: 0x1d2c, Hi: 0x1d5c, Stride: 1},
		{Lo: 0x1d9b, Hi: 0x1dbe, Stride: 1},
		{Lo: 0x2071, Hi: 0x2071, Stride: 1},
		{Lo: 0x207f, Hi: 0x207f, Stride: 1},
		{Lo: 0x212a, Hi: 0x212b, Stride: 1},
		{Lo: 0x2132, Hi: 0x2132, Stride: 1},
		{Lo: 0x214e, Hi: 0x214e, Stride: 1},
		{Lo: 0x2160, Hi: 0x2183, Stride: 1},
		{Lo: 0x2185, Hi: 0x2188, Stride: 1},
		{Lo: 0x2c7d, Hi: 0x2c7d, Stride: 1},
		{Lo: 0xa770, Hi: 0xa770, Stride: 1},
		{Lo: 0xa7f2, Hi: 0xa7f4, Stride: 1},
		{Lo: 0xa7f8, Hi: 0xa7f9, Stride: 1},
		{Lo: 0xab5c, Hi: 0xab5f, Stride: 1},
		{Lo: 0xab69, Hi: 0xab69, Stride: 1},
		{Lo: 0xff21, Hi: 0xff3a, Stride: 1},
		{Lo: 0xff41, Hi: 0xff5a, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x10780, Hi: 0x10785, Stride: 1},
		{Lo: 0x10787, Hi: 0x107b0, Stride: 1},
		{Lo: 0x107b2, Hi: 0x107ba, Stride: 1},
	},
	LatinOffset: 1,
}
