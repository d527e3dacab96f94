// Package nearest finds the names nearest a misspelt one, for "did you
// mean" in error messages (a category path, an input file, an environment
// variable).
package nearest

import (
	"slices"
	"strings"
)

// Names returns up to n of have, the ones nearest to want by Distance
// ignoring case, nearest first and ties in lexical order.
func Names(want string, have []string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	w := strings.ToLower(want)
	cs := make([]cand, 0, len(have))
	for _, h := range have {
		cs = append(cs, cand{h, Distance(w, strings.ToLower(h))})
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, min(n, len(cs)))
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// Slip returns the one name of have that want is a slip of: the same
// name in another case; else the only one a single edit away (a rune
// added, dropped or changed, or two adjacent runes swapped); else the
// only one that want, at least four runes, begins (a name cut short:
// catalog for catalogue). Case is ignored throughout. Two edits are not a
// slip: meta_Men and meta_Women are two real categories two edits apart,
// and a hint naming the wrong one misleads more than none; nor is a tie,
// for the same reason. Every "did you mean" of monomer's but the list of
// category paths asks this one question.
func Slip(want string, have []string) (string, bool) {
	w := strings.ToLower(want)
	best, bestD, ties := "", 2, 0
	var prefix []string
	for _, h := range have {
		lh := strings.ToLower(h)
		d := Distance(w, lh)
		switch {
		case d < bestD:
			best, bestD, ties = h, d, 0
		case d == bestD && h != best:
			ties++
		}
		if len([]rune(w)) >= 4 && strings.HasPrefix(lh, w) && !slices.Contains(prefix, h) {
			prefix = append(prefix, h)
		}
	}
	switch {
	case best != "" && ties == 0:
		return best, true
	case best == "" && len(prefix) == 1:
		return prefix[0], true
	}
	return "", false
}

// Distance is the optimal-string-alignment distance between a and b in
// runes: Levenshtein plus the transposition of two adjacent runes, the
// commonest typing slip.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows of the dynamic programme: i-2, i-1, i.
	prev2, prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
