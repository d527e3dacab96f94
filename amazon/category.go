package amazon

import (
	"slices"
	"strings"
)

// ClosestPaths returns up to n of have, the ones nearest to want by edit
// distance (insertions, deletions, substitutions and swaps of adjacent
// letters, ignoring case), nearest first and ties in lexical order. It
// serves "did you mean" messages for a category prefix that matches
// nothing: have holds the file's category paths cut to the prefix's depth,
// so "Clothing, Shoes & Jewelry > Mne" finds "... > Men" at distance 1.
func ClosestPaths(want string, have []string, n int) []string {
	type cand struct {
		path string
		d    int
	}
	w := []rune(strings.ToLower(want))
	cs := make([]cand, 0, len(have))
	for _, h := range have {
		cs = append(cs, cand{h, editDistance(w, []rune(strings.ToLower(h)))})
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.path, b.path)
	})
	out := make([]string, 0, min(n, len(cs)))
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.path)
	}
	return out
}

// editDistance is the optimal-string-alignment distance: Levenshtein plus
// the transposition of two adjacent runes, the commonest typing slip.
func editDistance(a, b []rune) int {
	// Three rows of the dynamic programme: i-2, i-1, i.
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
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
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
