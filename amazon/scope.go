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

// Related is the related list of p that graph names ("also_bought",
// "also_viewed", "bought_together"); nil for another graph.
func (p *Product) Related(graph string) []string {
	switch graph {
	case "also_bought":
		return p.AlsoBought
	case "also_viewed":
		return p.AlsoViewed
	case "bought_together":
		return p.BoughtTogether
	}
	return nil
}

// Need is the feature source an item must have, besides its category, to
// be kept: an item without one has no features to learn from.
type Need int8

const (
	NeedNothing Need = iota
	NeedImage        // an image-feature record (image features)
	NeedReview       // at least one review (a bag of words)
)

// Candidate is an item in a category scope, with what was found of its
// feature sources.
type Candidate struct {
	ASIN     string
	HasImage bool
	Reviews  int32
}

// Keep is the item rule after the category scope: it returns the positions
// in c of the candidates having the source need asks for, ordered by ASIN
// (an order that does not depend on the metadata's line order, for callers
// to index items by), and how many were dropped for want of an image and
// of a review. ASINs are distinct, as the metadata readers give them.
func Keep(c []Candidate, need Need) (kept []int, noImage, noReviews int64) {
	for k, it := range c {
		switch {
		case need == NeedImage && !it.HasImage:
			noImage++
		case need == NeedReview && it.Reviews == 0:
			noReviews++
		default:
			kept = append(kept, k)
		}
	}
	slices.SortFunc(kept, func(a, b int) int { return strings.Compare(c[a].ASIN, c[b].ASIN) })
	return kept, noImage, noReviews
}
