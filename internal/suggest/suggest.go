// Package suggest finds the name a user probably meant, for "did you mean"
// hints in error messages (definition fields, hooks, tools, modules).
package suggest

import "strings"

// Nearest returns the candidate closest to got by case-insensitive edit
// distance, if one is close enough to be a typo of it, else "". A candidate
// equal to got is never suggested: the hint would only repeat the mistake.
func Nearest(got string, candidates []string) string {
	best, bestD := "", len(got)/3+2
	for _, c := range candidates {
		if c == got {
			continue
		}
		if d := editDistance(strings.ToLower(got), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean is Nearest as a hint to append to a message: " (did you mean
// X?)", or "" when nothing is close.
func DidYouMean(got string, candidates []string) string {
	if best := Nearest(got, candidates); best != "" {
		return " (did you mean " + best + "?)"
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
