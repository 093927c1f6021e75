package pyfmt

import (
	"strings"
	"unicode"
)

// Python 3.11, which google-adk 2.13 runs on, uses the Unicode 14.0 database;
// Go's unicode package is at 15.0 (TestUnicodeVersion fails when that
// changes). The helpers below answer the way Python 3.11 does: characters
// first assigned in Unicode 15.0 count as unassigned (not printable, not
// identifier characters, not whitespace).

// unicode15Additions lists the code points assigned in Unicode 15.0 that
// were unassigned in 14.0 (data derived by comparing the two databases).
var unicode15Additions = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x0CF3, Hi: 0x0CF3, Stride: 1},
		{Lo: 0x0ECE, Hi: 0x0ECE, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x10EFD, Hi: 0x10EFF, Stride: 1},
		{Lo: 0x1123F, Hi: 0x11241, Stride: 1},
		{Lo: 0x11B00, Hi: 0x11B09, Stride: 1},
		{Lo: 0x11F00, Hi: 0x11F10, Stride: 1},
		{Lo: 0x11F12, Hi: 0x11F3A, Stride: 1},
		{Lo: 0x11F3E, Hi: 0x11F59, Stride: 1},
		{Lo: 0x1342F, Hi: 0x1342F, Stride: 1},
		{Lo: 0x13439, Hi: 0x13455, Stride: 1},
		{Lo: 0x1B132, Hi: 0x1B132, Stride: 1},
		{Lo: 0x1B155, Hi: 0x1B155, Stride: 1},
		{Lo: 0x1D2C0, Hi: 0x1D2D3, Stride: 1},
		{Lo: 0x1DF25, Hi: 0x1DF2A, Stride: 1},
		{Lo: 0x1E030, Hi: 0x1E06D, Stride: 1},
		{Lo: 0x1E08F, Hi: 0x1E08F, Stride: 1},
		{Lo: 0x1E4D0, Hi: 0x1E4F9, Stride: 1},
		{Lo: 0x1F6DC, Hi: 0x1F6DC, Stride: 1},
		{Lo: 0x1F774, Hi: 0x1F776, Stride: 1},
		{Lo: 0x1F77B, Hi: 0x1F77F, Stride: 1},
		{Lo: 0x1F7D9, Hi: 0x1F7D9, Stride: 1},
		{Lo: 0x1FA75, Hi: 0x1FA77, Stride: 1},
		{Lo: 0x1FA87, Hi: 0x1FA88, Stride: 1},
		{Lo: 0x1FAAD, Hi: 0x1FAAF, Stride: 1},
		{Lo: 0x1FABB, Hi: 0x1FABD, Stride: 1},
		{Lo: 0x1FABF, Hi: 0x1FABF, Stride: 1},
		{Lo: 0x1FACE, Hi: 0x1FACF, Stride: 1},
		{Lo: 0x1FADA, Hi: 0x1FADB, Stride: 1},
		{Lo: 0x1FAE8, Hi: 0x1FAE8, Stride: 1},
		{Lo: 0x1FAF7, Hi: 0x1FAF8, Stride: 1},
		{Lo: 0x2B739, Hi: 0x2B739, Stride: 1},
		{Lo: 0x31350, Hi: 0x323AF, Stride: 1},
	},
}

// nfkcIDStartExclusions are ID_Start characters that are not XID_Start
// (their NFKC forms do not start identifiers).
var nfkcIDStartExclusions = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x037A, Hi: 0x037A, Stride: 1},
		{Lo: 0x0E33, Hi: 0x0E33, Stride: 1},
		{Lo: 0x0EB3, Hi: 0x0EB3, Stride: 1},
		{Lo: 0x309B, Hi: 0x309C, Stride: 1},
		{Lo: 0xFC5E, Hi: 0xFC63, Stride: 1},
		{Lo: 0xFDFA, Hi: 0xFDFB, Stride: 1},
		{Lo: 0xFE70, Hi: 0xFE7E, Stride: 2},
		{Lo: 0xFF9E, Hi: 0xFF9F, Stride: 1},
	},
}

// nfkcIDContinueExclusions are ID_Continue characters that are not
// XID_Continue.
var nfkcIDContinueExclusions = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x037A, Hi: 0x037A, Stride: 1},
		{Lo: 0x309B, Hi: 0x309C, Stride: 1},
		{Lo: 0xFC5E, Hi: 0xFC63, Stride: 1},
		{Lo: 0xFDFA, Hi: 0xFDFB, Stride: 1},
		{Lo: 0xFE70, Hi: 0xFE7E, Stride: 2},
	},
}

func idNeverPattern(r rune) bool {
	return !unicode.In(r, unicode.Pattern_Syntax, unicode.Pattern_White_Space)
}

// isXIDStart reports Python 3.11's _PyUnicode_IsXidStart.
func isXIDStart(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	if unicode.Is(unicode15Additions, r) || unicode.Is(nfkcIDStartExclusions, r) {
		return false
	}
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_ID_Start) && idNeverPattern(r)
}

// isXIDContinue reports Python 3.11's _PyUnicode_IsXidContinue.
func isXIDContinue(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	if unicode.Is(unicode15Additions, r) || unicode.Is(nfkcIDContinueExclusions, r) {
		return false
	}
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_ID_Start, unicode.Mn, unicode.Mc,
		unicode.Nd, unicode.Pc, unicode.Other_ID_Continue) && idNeverPattern(r)
}

// IsIdentifier reports Python 3.11's str.isidentifier(). Invalid UTF-8
// never forms an identifier.
func IsIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == unicode.ReplacementChar && !validRuneAt(s, i) {
			return false
		}
		if i == 0 {
			if !isXIDStart(r) && r != '_' {
				return false
			}
		} else if !isXIDContinue(r) {
			return false
		}
	}
	return true
}

func validRuneAt(s string, i int) bool {
	// U+FFFD spelled out in the string is valid; a decoding error is not.
	return len(s) >= i+3 && s[i] == 0xEF && s[i+1] == 0xBF && s[i+2] == 0xBD
}

// isPrintable reports Python 3.11's str.isprintable() for one character.
func isPrintable(r rune) bool {
	if unicode.Is(unicode15Additions, r) {
		return false
	}
	return unicode.IsPrint(r)
}

// IsSpace reports Python's str.isspace() for one character: Unicode
// White_Space (as Go's unicode.IsSpace) plus the information separators
// U+001C..U+001F.
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0x1C, 0x1D, 0x1E, 0x1F, ' ', 0x85, 0xA0,
		0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return 0x2000 <= r && r <= 0x200A
}

// Strip is Python's str.strip() with no arguments.
func Strip(s string) string {
	return strings.TrimFunc(s, IsSpace)
}
