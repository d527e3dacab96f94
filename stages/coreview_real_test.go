package stages

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"monomer/amazon"
	"monomer/graph"
)

// TestCoReviewRealData compares co_review with the real also_buy and
// also_view lists of the 2018 samples in ../shared/realdata: precision
// (co-review edges that are also list edges) and recall (list edges that
// co_review finds), over the items of the metadata that have a review, at
// a few windows and minimum user counts. Run with -v for the table
// (docs/notes/2026-11-25-co-review-against-lists.md). It asserts
// what must hold whatever the figures: a longer window or fewer users
// never loses an edge.
func TestCoReviewRealData(t *testing.T) {
	const dir = "../../shared/realdata"
	for _, cat := range []string{"Magazine_Subscriptions", "Gift_Cards"} {
		meta := filepath.Join(dir, "meta_"+cat+".json.gz")
		reviews := filepath.Join(dir, cat+"_5.json.gz")
		if _, err := os.Stat(reviews); err != nil {
			t.Skipf("real 2018 samples not available (%v)", err)
		}
		// Items: metadata records with a review in the 5-core file.
		reviewed := map[string]bool{}
		for r, err := range amazon.Reviews(reviews, nil, nil) {
			if err != nil {
				t.Fatal(err)
			}
			reviewed[r.ASIN] = true
		}
		index := map[string]int32{}
		var asins []string
		var buy, view [][]string
		var subs []string // the level below the root: ingest's subcategory at depth 1
		if _, err := amazon.ReadMeta(context.Background(), meta, func(p *amazon.Product) error {
			if !reviewed[p.ASIN] {
				return nil
			}
			index[p.ASIN] = int32(len(asins))
			asins = append(asins, p.ASIN)
			buy, view = append(buy, slices.Clone(p.AlsoBought)), append(view, slices.Clone(p.AlsoViewed))
			sub := ""
			if len(p.Categories) > 0 && len(p.Categories[0]) > 1 {
				sub = p.Categories[0][1]
			}
			subs = append(subs, sub)
			return nil
		}, nil); err != nil {
			t.Fatal(err)
		}
		edgesOf := func(lists [][]string) map[graph.Edge]bool {
			m := map[graph.Edge]bool{}
			for i, l := range lists {
				for _, b := range l {
					if j, ok := index[b]; ok && int(j) != i {
						m[graph.Edge{Src: int32(i), Dst: j}] = true
					}
				}
			}
			return m
		}
		ab, av := edgesOf(buy), edgesOf(view)
		either := map[graph.Edge]bool{}
		for e := range ab {
			either[e] = true
		}
		for e := range av {
			either[e] = true
		}
		var events []graph.Review
		users := map[string]int32{}
		for r, err := range amazon.Reviews(reviews, nil, nil) {
			if err != nil {
				t.Fatal(err)
			}
			i, ok := index[r.ASIN]
			if !ok || r.ReviewerID == "" {
				continue
			}
			u, ok := users[r.ReviewerID]
			if !ok {
				u = int32(len(users))
				users[r.ReviewerID] = u
			}
			events = append(events, graph.Review{User: u, Item: i, Time: r.UnixReviewTime})
		}
		n := float64(len(asins))
		t.Logf("%s: %d items with reviews, %d reviews by %d users; %d also_buy, %d also_view, %d either (directed, between these items); a random pair is an also_buy edge with odds %.3f, either way round in either list %.3f",
			cat, len(asins), len(events), len(users), len(ab), len(av), len(either), float64(len(ab))/(n*(n-1)), float64(undirected(either))/(n*(n-1)/2))
		t.Logf("%-8s %-5s %7s  %-22s %-22s %-22s", "window", "users", "edges", "also_buy P / R", "also_view P / R", "either P / R (undir.)")
		var prev map[graph.Edge]bool
		for _, minUsers := range []int{1, 2, 3} {
			prev = nil
			for _, days := range []int{0, 7, 30, 365} {
				got, _, err := graph.CoReview(context.Background(), slices.Clone(events), graph.CoReviewConfig{
					Window: int64(days) * 86400, MinUsers: minUsers, MaxUserItems: graph.DefaultCoReviewMaxUserItems})
				if err != nil {
					t.Fatal(err)
				}
				set := map[graph.Edge]bool{}
				for _, e := range got {
					set[e] = true
				}
				for e := range prev {
					if !set[e] {
						t.Errorf("%s: window %d days, %d users lost the edge %v of a shorter window", cat, days, minUsers, e)
					}
				}
				prev = set
				t.Logf("%-8s %-5d %7d  %-22s %-22s %-22s", fmt.Sprintf("%dd", days), minUsers, len(got),
					pr(set, ab, false), pr(set, av, false), pr(set, either, true))
				if minUsers == graph.DefaultCoReviewMinUsers && days == graph.DefaultCoReviewWindowDays {
					cross := func(m map[graph.Edge]bool) map[graph.Edge]bool {
						out := map[graph.Edge]bool{}
						for e := range m {
							if subs[e.Src] != subs[e.Dst] {
								out[e] = true
							}
						}
						return out
					}
					t.Logf("%s, defaults, cross-subcategory pairs only (ingest at depth 1): %d co_review edges, %d also_buy, %d also_view; P / R also_buy %s, also_view %s, either (undir.) %s",
						cat, len(cross(set)), len(cross(ab)), len(cross(av)), pr(cross(set), cross(ab), false), pr(cross(set), cross(av), false), pr(cross(set), cross(either), true))
				}
			}
		}
	}
}

// pr formats precision and recall of got against want; undirected counts a
// pair as found when either direction is.
func pr(got, want map[graph.Edge]bool, undirected bool) string {
	in := func(m map[graph.Edge]bool, e graph.Edge) bool {
		return m[e] || undirected && m[graph.Edge{Src: e.Dst, Dst: e.Src}]
	}
	var hit, found int
	for e := range got {
		if in(want, e) {
			hit++
		}
	}
	for e := range want {
		if in(got, e) {
			found++
		}
	}
	ratio := func(a, b int) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.3f", float64(a)/float64(b))
	}
	return fmt.Sprintf("%s / %s", ratio(hit, len(got)), ratio(found, len(want)))
}

// undirected counts the unordered pairs of a directed edge set.
func undirected(m map[graph.Edge]bool) int {
	n := 0
	for e := range m {
		if e.Src < e.Dst || !m[graph.Edge{Src: e.Dst, Dst: e.Src}] {
			n++
		}
	}
	return n
}
