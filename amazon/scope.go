package amazon

import (
	"slices"
	"strings"
)

// An experiment is scoped to the items under one category of Amazon's
// category tree, written as its path of levels ("Clothing, Shoes & Jewelry
// > Men"); an item's subcategory is the part of its category path just
// below that prefix.

// CategoryPrefix splits a job's category ("A > B") into its levels.
func CategoryPrefix(s string) []string {
	parts := strings.Split(s, ">")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// Subcategory finds an item's subcategory: on the first category path that
// starts with prefix, the levels from just below the prefix down to depth
// levels below it, joined by " > " (so equal names under different parents
// stay apart). matched reports whether any path starts with prefix; ok
// whether that path reaches the depth.
func Subcategory(paths [][]string, prefix []string, depth int) (sub, path string, matched, ok bool) {
	for _, p := range paths {
		if len(p) < len(prefix) || !slices.Equal(p[:len(prefix)], prefix) {
			continue
		}
		full := strings.Join(p, " > ")
		if len(p) < len(prefix)+depth {
			return "", full, true, false
		}
		return strings.Join(p[len(prefix):len(prefix)+depth], " > "), full, true, true
	}
	return "", "", false, false
}
