package amazon

import "monomer/internal/nearest"

// ClosestPaths returns up to n of have, the ones nearest to want by edit
// distance (insertions, deletions, substitutions and swaps of adjacent
// letters, ignoring case), nearest first and ties in lexical order. It
// serves "did you mean" messages for a category prefix that matches
// nothing: have holds the file's category paths cut to the prefix's depth,
// so "Clothing, Shoes & Jewelry > Mne" finds "... > Men" at distance 1.
func ClosestPaths(want string, have []string, n int) []string {
	return nearest.Names(want, have, n)
}
