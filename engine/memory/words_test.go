package memory

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"golang.org/x/text/unicode/runenames"
)

// The word sets google-adk 2.13 extracts (Python 3.11,
// _extract_searchable_words and _extract_words_lower).
func TestWords(t *testing.T) {
	tests := []struct {
		text             string
		searchable, base []string
	}{
		{"Hello, World! hello_world 42", []string{"42", "hello", "hello_world", "world"}, []string{"42", "hello", "hello_world", "world"}},
		{"私はPythonを使う", []string{"python", "を使う", "私は", "私はpythonを使う"}, []string{"私はpythonを使う"}},
		{"Café naïve", []string{"café", "naïve"}, []string{"café", "naïve"}},
		{"Cafe\u0301 ÉCOLE", []string{"café", "école"}, []string{"café", "école"}},
		{"ΟΔΥΣΣΕΥΣ σοφός", []string{"οδυσσευς", "σοφός"}, []string{"οδυσσευς", "σοφός"}},
		{"İstanbul", []string{"i", "i̇stanbul", "stanbul", "\u0307"}, []string{"i̇stanbul"}},
		{"ﬁne Ｐｙｔｈｏｎ ªb", []string{"b", "ª", "ªb", "ﬁne", "ｐｙｔｈｏｎ"}, []string{"ªb", "ﬁne", "ｐｙｔｈｏｎ"}},
		{"हिन्दी भाषा", []string{"द", "न", "भ", "ष", "ह"}, []string{"द", "न", "भ", "ष", "ह"}},
		{"x²+y³ Ⅻ ½", []string{"x", "x²", "y", "y³", "²", "³", "½", "ⅻ"}, []string{"x²", "y³", "½", "ⅻ"}},
		{"straße STRASSE", []string{"strasse", "straße"}, []string{"strasse", "straße"}},
		{"東京タワーとTokyoTower", []string{"tokyotower", "東京タワーと", "東京タワーとtokyotower"}, []string{"東京タワーとtokyotower"}},
		{"  ", nil, nil},
		{"αβγabcδ", []string{"abc", "αβγ", "αβγabcδ", "δ"}, []string{"αβγabcδ"}},
	}
	for _, tc := range tests {
		if got := slices.Sorted(maps.Keys(searchableWords(tc.text))); !slices.Equal(got, tc.searchable) {
			t.Errorf("searchableWords(%q) = %q, want %q", tc.text, got, tc.searchable)
		}
		if got := slices.Sorted(maps.Keys(wordsLower(tc.text))); !slices.Equal(got, tc.base) {
			t.Errorf("wordsLower(%q) = %q, want %q", tc.text, got, tc.base)
		}
	}
}

// isLatin must be "the Unicode name starts with LATIN" for every word
// character, which is what notLatinNamed stands in for.
func TestIsLatinMatchesUnicodeNames(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !isWordRune(r) {
			continue
		}
		want := strings.HasPrefix(runenames.Name(r), "LATIN")
		if got := isLatin(r); got != want {
			t.Errorf("isLatin(%U %s) = %v, want %v", r, runenames.Name(r), got, want)
		}
	}
	for _, r := range "azAZ09_" {
		if !isLatin(r) {
			t.Errorf("isLatin(%q) = false", r)
		}
	}
}

func TestFormatTimestamp(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	tests := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), "2025-01-02T05:04:05"},
		{time.Date(2025, 1, 2, 3, 4, 5, 120000, time.UTC), "2025-01-02T05:04:05.000120"},
		{time.Date(2025, 1, 2, 3, 4, 5, 999, time.UTC), "2025-01-02T05:04:05"}, // below a microsecond
		{time.Date(2025, 1, 2, 23, 4, 5, 500000000, time.UTC), "2025-01-03T01:04:05.500000"},
	}
	for _, tc := range tests {
		if got := formatTimestamp(tc.t, loc); got != tc.want {
			t.Errorf("formatTimestamp(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}
