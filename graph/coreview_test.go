package graph

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"
)

// coReviews is a hand-made review set; the comments give each user's votes
// under Window 10, MaxUserItems 3.
func coReviews() []Review {
	return []Review{
		// u0: 0→1 (exactly the window apart), 1→2; not 0→2 (11 apart).
		// The second review of item 1 does not count.
		{0, 0, 0}, {0, 1, 10}, {0, 2, 11}, {0, 1, 200},
		// u1: 2→0, 0→1; item 2's first review (95) is the one that counts,
		// so 1→2 gets no vote from u1 (it would at 111).
		{1, 2, 95}, {1, 0, 100}, {1, 1, 110}, {1, 2, 111},
		// u2, u3: a tie relates both ways: 3→4 and 4→3.
		{2, 3, 5}, {2, 4, 5},
		{3, 4, 50}, {3, 3, 50},
		// u4: 20 apart, outside the window; u5: 5→0.
		{4, 5, 0}, {4, 0, 20},
		{5, 5, 0}, {5, 0, 10},
		// u6: four items, over MaxUserItems 3: skipped. Counted, it would
		// vote every pair of 0..3 both ways.
		{6, 0, 0}, {6, 1, 0}, {6, 2, 0}, {6, 3, 0},
	}
}

func TestCoReview(t *testing.T) {
	base := CoReviewConfig{Window: 10, MinUsers: 2, MaxUserItems: 3}
	tests := []struct {
		name  string
		cfg   CoReviewConfig
		want  []Edge
		stats CoReviewStats
	}{
		{
			name: "defaults of the test: two users in the window",
			cfg:  base,
			// 0→1: u0, u1. 3→4 and 4→3: u2, u3. One vote only: 1→2 (u0),
			// 2→0 (u1), 5→0 (u5). Nothing the other way round of 0→1.
			want:  []Edge{{0, 1}, {3, 4}, {4, 3}},
			stats: CoReviewStats{Users: 7, UsersSkipped: 1, RepeatReviews: 2, UserPairs: 9, Pairs: 6, Edges: 3},
		},
		{
			name:  "one user is enough",
			cfg:   CoReviewConfig{Window: 10, MinUsers: 1, MaxUserItems: 3},
			want:  []Edge{{0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 3}, {5, 0}},
			stats: CoReviewStats{Users: 7, UsersSkipped: 1, RepeatReviews: 2, UserPairs: 9, Pairs: 6, Edges: 6},
		},
		{
			name: "window 20: u4's pair joins u5's",
			cfg:  CoReviewConfig{Window: 20, MinUsers: 2, MaxUserItems: 3},
			// New votes: 0→2 (u0), 2→1 (u1), 5→0 (u4).
			want:  []Edge{{0, 1}, {3, 4}, {4, 3}, {5, 0}},
			stats: CoReviewStats{Users: 7, UsersSkipped: 1, RepeatReviews: 2, UserPairs: 12, Pairs: 8, Edges: 4},
		},
		{
			name: "window 9: the boundary pairs drop out",
			cfg:  CoReviewConfig{Window: 9, MinUsers: 1, MaxUserItems: 3},
			// u0 keeps 1→2 only, u1 keeps 2→0 only, u5 loses 5→0.
			want:  []Edge{{1, 2}, {2, 0}, {3, 4}, {4, 3}},
			stats: CoReviewStats{Users: 7, UsersSkipped: 1, RepeatReviews: 2, UserPairs: 6, Pairs: 4, Edges: 4},
		},
		{
			name: "the prolific user counted",
			cfg:  CoReviewConfig{Window: 10, MinUsers: 2, MaxUserItems: 4},
			// u6 adds all 12 ordered pairs of 0..3: 1→2 and 2→0 reach two.
			want:  []Edge{{0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 3}},
			stats: CoReviewStats{Users: 7, RepeatReviews: 2, UserPairs: 21, Pairs: 15, Edges: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st, err := CoReview(context.Background(), coReviews(), tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("edges %v, want %v", got, tt.want)
			}
			if st != tt.stats {
				t.Errorf("stats %+v, want %+v", st, tt.stats)
			}
		})
	}
}

// TestCoReviewOrder: the edges do not depend on the order of the reviews.
func TestCoReviewOrder(t *testing.T) {
	cfg := CoReviewConfig{Window: 10, MinUsers: 1, MaxUserItems: 4}
	want, _, err := CoReview(context.Background(), coReviews(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 20 {
		rs := coReviews()
		rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
		got, _, err := CoReview(context.Background(), rs, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("shuffled: %v, want %v", got, want)
		}
	}
}

func TestCoReviewCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := CoReview(ctx, coReviews(), CoReviewConfig{Window: 10, MinUsers: 1, MaxUserItems: 3}); err != context.Canceled {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}
