package graph

import (
	"cmp"
	"context"
	"slices"
)

// Review is one review event for CoReview: User reviewed Item at Time
// (seconds; any origin). Users and items are dense indices chosen by the
// caller.
type Review struct {
	User, Item int32
	Time       int64
}

// CoReviewConfig sets CoReview. The zero value is not usable: fill it from
// the defaults below (the job does).
type CoReviewConfig struct {
	// Window is the longest time, in seconds, between two reviews by one
	// user for them to relate the two items (inclusive).
	Window int64
	// MinUsers is how many distinct users must relate a pair (in the same
	// direction) for it to be an edge; at least 1.
	MinUsers int
	// MaxUserItems skips users who reviewed more distinct items than this:
	// one user with k items in a window makes k(k−1)/2 pairs, so a few
	// prolific accounts would otherwise dominate time and memory while
	// saying little about any one pair. At least 2.
	MaxUserItems int
}

// Defaults of the co_review graph.
const (
	// DefaultCoReviewWindowDays is 30 days: long enough to cover the
	// delay between buying and reviewing two things bought together (the
	// 2014 and 2018 files give review times to the day only), short enough
	// that a regular's reviews years apart do not relate everything they
	// ever bought. On the real 2018 samples it gives more of the
	// also_buy/also_view edges than 7 days at about the same precision
	// (docs/notes/2026-11-25-co-review-against-lists.md).
	DefaultCoReviewWindowDays = 30
	// DefaultCoReviewMinUsers is 2: one user's pair is as likely to be a
	// coincidence as a relation, two independent users agreeing is the
	// smallest evidence that is not.
	DefaultCoReviewMinUsers = 2
	// DefaultCoReviewMaxUserItems is 1000 distinct items: beyond the
	// reviews of nearly every shopper (a 5-core user has at least 5), it
	// bounds one user's pairs to about half a million.
	DefaultCoReviewMaxUserItems = 1000
)

// CoReviewStats reports what CoReview did.
type CoReviewStats struct {
	Users         int   // distinct users among the reviews
	UsersSkipped  int   // users over MaxUserItems, whose reviews were not used
	RepeatReviews int   // reviews of an item the same user had reviewed before (the earliest counts)
	UserPairs     int64 // (user, ordered pair) votes within the window
	Pairs         int   // distinct ordered pairs with at least one vote
	Edges         int   // pairs with at least MinUsers votes
}

// CoReview derives a relation from reviews: x → y is an edge when at least
// MinUsers distinct users reviewed both x and y with y's review at most
// Window after x's. The earlier item is the query, as in "bought x, then
// y". A user's repeated reviews of one item count once, at the earliest.
// Two reviews at the same time relate the items both ways (the data cannot
// order them, and the 2014 and 2018 times are whole days, so same-day
// reviews are common). Self pairs never occur.
//
// The result is sorted by (Src, Dst) and does not depend on the order of
// reviews, which CoReview sorts in place.
//
// Cost: sorting the n reviews, then for each user every pair of their
// reviews within the window, each kept as 8 bytes until counted: at most
// n·(MaxUserItems−1)/2 pairs, and in practice far fewer (a user's reviews
// within one window are few). Once ctx is done CoReview returns ctx.Err()
// within ctxEvery users.
func CoReview(ctx context.Context, reviews []Review, cfg CoReviewConfig) ([]Edge, CoReviewStats, error) {
	var st CoReviewStats
	// By user, then time, then item: each user's reviews in time order,
	// with the earliest review of an item first among its repeats.
	slices.SortFunc(reviews, func(a, b Review) int {
		return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.Time, b.Time), cmp.Compare(a.Item, b.Item))
	})
	var (
		votes []uint64 // src<<32 | dst, one per user and ordered pair
		// seenBy[item] is 1 + the last user who reviewed it: a repeat
		// within one user's reviews is one whose stamp is that user's.
		seenBy []int32
		mine   []Review
		user   int32
	)
	for _, r := range reviews {
		if int(r.Item) >= len(seenBy) {
			seenBy = append(seenBy, make([]int32, int(r.Item)+1-len(seenBy))...)
		}
	}
	for lo := 0; lo < len(reviews); {
		if st.Users%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, st, err
			}
		}
		hi := lo + 1
		for hi < len(reviews) && reviews[hi].User == reviews[lo].User {
			hi++
		}
		st.Users++
		user++
		mine = mine[:0]
		for _, r := range reviews[lo:hi] {
			if seenBy[r.Item] == user {
				st.RepeatReviews++
				continue
			}
			seenBy[r.Item] = user
			mine = append(mine, r)
		}
		lo = hi
		if len(mine) > cfg.MaxUserItems {
			st.UsersSkipped++
			continue
		}
		for i, x := range mine {
			for _, y := range mine[i+1:] {
				if y.Time-x.Time > cfg.Window {
					break
				}
				votes = append(votes, pairKey(x.Item, y.Item))
				if y.Time == x.Time {
					votes = append(votes, pairKey(y.Item, x.Item))
				}
			}
		}
	}
	st.UserPairs = int64(len(votes))
	slices.Sort(votes)
	var edges []Edge
	for lo := 0; lo < len(votes); {
		hi := lo + 1
		for hi < len(votes) && votes[hi] == votes[lo] {
			hi++
		}
		st.Pairs++
		if hi-lo >= cfg.MinUsers {
			edges = append(edges, Edge{Src: int32(votes[lo] >> 32), Dst: int32(uint32(votes[lo]))})
		}
		lo = hi
	}
	st.Edges = len(edges)
	return edges, st, nil
}

// pairKey orders pairs by (src, dst) as uint64s, for item indices ≥ 0.
func pairKey(src, dst int32) uint64 { return uint64(uint32(src))<<32 | uint64(uint32(dst)) }
