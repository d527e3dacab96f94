package graph_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"monomer/graph"
)

func Example() {
	// Six items in three subcategories (say tops, trousers, shoes) and the
	// pairs "y is listed on x's page".
	sub := []int32{0, 0, 1, 1, 2, 2}
	pos := []graph.Edge{{0, 2}, {0, 4}, {1, 3}, {2, 5}, {3, 0}, {4, 1}, {5, 3}, {1, 5}}
	rng := rand.New(rand.NewPCG(1, 1))

	neg, st, err := graph.Rewire(context.Background(), pos, sub, rng, graph.RewireOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("negatives:", neg)
	fmt.Println("dropped:", st.Dropped, "never switched in the main phase:", st.NeverSwitched)
	fmt.Println("out-degrees:", outDegrees(pos, 6), outDegrees(neg, 6))

	pairs, sst := graph.SplitPairs(pos, neg, rng, 0)
	fmt.Println("rows:", len(pairs), "per split:", sst.Pairs, "related:", sst.Related)
	fmt.Printf("first: %+v\n", pairs[0])
	// Output:
	// negatives: [{0 3} {0 5} {1 2} {1 4} {2 1} {3 5} {4 3} {5 0}]
	// dropped: 0 never switched in the main phase: 0
	// out-degrees: [2 2 1 1 1 1] [2 2 1 1 1 1]
	// rows: 16 per split: [13 1 2] related: [7 0 1]
	// first: {X:0 Y:5 Label:false Split:train}
}

func outDegrees(es []graph.Edge, n int) []int {
	d := make([]int, n)
	for _, e := range es {
		d[e.Src]++
	}
	return d
}

func ExampleCoReview() {
	const day = 86400
	// Users 0 and 1 both reviewed item 0 and then, within a week, item 1;
	// user 2 reviewed items 1 and 2 on the same day.
	reviews := []graph.Review{
		{User: 0, Item: 0, Time: 0}, {User: 0, Item: 1, Time: 3 * day},
		{User: 1, Item: 0, Time: 100 * day}, {User: 1, Item: 1, Time: 106 * day},
		{User: 2, Item: 1, Time: 50 * day}, {User: 2, Item: 2, Time: 50 * day},
	}
	for _, minUsers := range []int{2, 1} {
		edges, st, err := graph.CoReview(context.Background(), reviews, graph.CoReviewConfig{
			Window: 7 * day, MinUsers: minUsers, MaxUserItems: graph.DefaultCoReviewMaxUserItems,
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("min %d users: %v of %d pairs\n", minUsers, edges, st.Pairs)
	}
	// Output:
	// min 2 users: [{0 1}] of 3 pairs
	// min 1 users: [{0 1} {1 2} {2 1}] of 3 pairs
}
