package models

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"monomer/graph"
)

// A hand-made catalogue: subcategories and one or two items in each.
var (
	ctNames = []string{"Shoes", "Jeans", "Belts", "Hats", "Socks"}
	//               item: 0  1  2  3  4  5  6
	ctSub = []int32{0, 0, 1, 1, 2, 3, 4}
)

// ctTrain links Jeans -> Shoes 3x, Belts 2x, Hats 2x, Socks 1x, and
// Shoes -> Jeans, Hats, Socks once each; the negatives must not count.
func ctTrain() []graph.Pair {
	pos := func(x, y int32) graph.Pair { return graph.Pair{X: x, Y: y, Label: true} }
	neg := func(x, y int32) graph.Pair { return graph.Pair{X: x, Y: y} }
	return []graph.Pair{
		pos(2, 0), pos(3, 1), pos(2, 1),
		pos(2, 4), pos(3, 4),
		pos(3, 5), pos(2, 5),
		pos(3, 6),
		neg(2, 6), neg(3, 6), neg(2, 6), neg(3, 6), neg(2, 6), neg(4, 6),
		pos(0, 3), pos(1, 5), pos(0, 6),
	}
}

func TestCTRanking(t *testing.T) {
	m, err := FitCT(ctSub, ctNames, ctTrain(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// From Jeans (L=4, keep ceil(0.5*4)=2): Shoes 3, then Belts and Hats
	// tie at 2 and go by name, then Socks. From Shoes (L=3, keep
	// ceil(1.5)=2): three ties of 1, by name.
	want := []CTCount{
		{Source: 0, Target: 3, SourceName: "Shoes", TargetName: "Hats", Links: 1, Rank: 1, Kept: true},
		{Source: 0, Target: 1, SourceName: "Shoes", TargetName: "Jeans", Links: 1, Rank: 2, Kept: true},
		{Source: 0, Target: 4, SourceName: "Shoes", TargetName: "Socks", Links: 1, Rank: 3},
		{Source: 1, Target: 0, SourceName: "Jeans", TargetName: "Shoes", Links: 3, Rank: 1, Kept: true},
		{Source: 1, Target: 2, SourceName: "Jeans", TargetName: "Belts", Links: 2, Rank: 2, Kept: true},
		{Source: 1, Target: 3, SourceName: "Jeans", TargetName: "Hats", Links: 2, Rank: 3},
		{Source: 1, Target: 4, SourceName: "Jeans", TargetName: "Socks", Links: 1, Rank: 4},
	}
	if got := m.Counts(); !reflect.DeepEqual(got, want) {
		t.Errorf("counts:\n got %+v\nwant %+v", got, want)
	}

	for _, tc := range []struct {
		name       string
		x, y       int32
		dist, prob float64
	}{
		{name: "jeans to top shoes", x: 2, y: 1, dist: 0, prob: 1},
		{name: "jeans to belts, kept on name tie", x: 3, y: 4, dist: 0.25, prob: 1},
		{name: "jeans to hats, lost on name tie", x: 2, y: 5, dist: 0.5, prob: 0},
		{name: "jeans to socks", x: 2, y: 6, dist: 0.75, prob: 0},
		{name: "shoes to jeans", x: 1, y: 3, dist: 1.0 / 3, prob: 1},
		{name: "shoes to socks", x: 0, y: 6, dist: 2.0 / 3, prob: 0},
		{name: "shoes to belts, never linked", x: 0, y: 4, dist: 1, prob: 0},
		{name: "from belts, no links at all", x: 4, y: 0, dist: 1, prob: 0},
		{name: "within a subcategory", x: 0, y: 1, dist: 1, prob: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dist, prob := m.Score([]graph.Pair{{X: tc.x, Y: tc.y}})
			if math.Abs(dist[0]-tc.dist) > 1e-15 || prob[0] != tc.prob {
				t.Errorf("(%d,%d): dist %v prob %v, want %v %v", tc.x, tc.y, dist[0], prob[0], tc.dist, tc.prob)
			}
		})
	}
}

func TestCTTopFraction(t *testing.T) {
	for _, tc := range []struct {
		name        string
		top         float64
		jeans, shoe int // targets kept from Jeans (of 4) and Shoes (of 3)
	}{
		{name: "default half", top: 0, jeans: 2, shoe: 2},
		{name: "all", top: 1, jeans: 4, shoe: 3},
		{name: "quarter", top: 0.25, jeans: 1, shoe: 1},
		{name: "tiny keeps one", top: 1e-6, jeans: 1, shoe: 1},
		{name: "0.75", top: 0.75, jeans: 3, shoe: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := FitCT(ctSub, ctNames, ctTrain(), tc.top)
			if err != nil {
				t.Fatal(err)
			}
			kept := map[string]int{}
			for _, c := range m.Counts() {
				if c.Kept {
					kept[c.SourceName]++
				}
			}
			if kept["Jeans"] != tc.jeans || kept["Shoes"] != tc.shoe {
				t.Errorf("kept %v, want Jeans %d Shoes %d", kept, tc.jeans, tc.shoe)
			}
		})
	}
	// ceil must not round 0.3*10 = 3.0000000000000004 up to 4.
	names := make([]string, 11)
	sub := make([]int32, 11)
	var train []graph.Pair
	for i := range names {
		names[i] = fmt.Sprintf("s%02d", i)
		sub[i] = int32(i)
		if i > 0 {
			train = append(train, graph.Pair{X: 0, Y: int32(i), Label: true})
		}
	}
	m, err := FitCT(sub, names, train, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	if _, prob := m.Score(train); prob[2] != 1 || prob[3] != 0 {
		t.Errorf("top 0.3 of 10: predictions %v, want the first 3", prob)
	}
}

func TestCTDeterministic(t *testing.T) {
	train := ctTrain()
	first, err := FitCT(ctSub, ctNames, train, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 20; i++ {
		r.Shuffle(len(train), func(a, b int) { train[a], train[b] = train[b], train[a] })
		m, err := FitCT(ctSub, ctNames, train, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(m.Counts(), first.Counts()) {
			t.Fatalf("shuffle %d: counts differ", i)
		}
	}
}

func TestCTInvalidInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sub   []int32
		train []graph.Pair
		top   float64
		want  string
	}{
		{name: "top above 1", sub: ctSub, top: 1.5, want: "top fraction 1.5"},
		{name: "negative top", sub: ctSub, top: -0.5, want: "top fraction -0.5"},
		{name: "NaN top", sub: ctSub, top: math.NaN(), want: "top fraction NaN"},
		{name: "subcategory out of range", sub: []int32{0, 5}, want: "item 1: subcategory 5 outside [0,5)"},
		{name: "pair item out of range", sub: ctSub, train: []graph.Pair{{X: 1, Y: 7, Label: true}}, want: "training pair 0 (1, 7)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FitCT(tc.sub, ctNames, tc.train, tc.top)
			if !errors.Is(err, ErrCTInput) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v: want ErrCTInput containing %q", err, tc.want)
			}
		})
	}
}

func ExampleFitCT() {
	names := []string{"Shoes", "Jeans", "Belts"}
	sub := []int32{0, 1, 2, 1} // items 0..3
	train := []graph.Pair{
		{X: 1, Y: 0, Label: true}, {X: 3, Y: 0, Label: true}, // Jeans -> Shoes twice
		{X: 1, Y: 2, Label: true}, // Jeans -> Belts once
		{X: 3, Y: 2, Label: false},
	}
	ct, err := FitCT(sub, names, train, 0.5)
	if err != nil {
		panic(err)
	}
	for _, c := range ct.Counts() {
		fmt.Printf("%s -> %s: %d links, rank %d, kept %v\n", c.SourceName, c.TargetName, c.Links, c.Rank, c.Kept)
	}
	test := []graph.Pair{{X: 3, Y: 0, Label: true}, {X: 1, Y: 2, Label: false}, {X: 0, Y: 1, Label: false}}
	dist, prob := ct.Score(test)
	fmt.Println(dist, prob, ErrorRate([]bool{true, false, false}, prob))
	// Output:
	// Jeans -> Shoes: 2 links, rank 1, kept true
	// Jeans -> Belts: 1 links, rank 2, kept false
	// [0 0.5 1] [1 0 0] 0
}
