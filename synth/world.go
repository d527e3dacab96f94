package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Kind says where an item sits in the category tree.
type Kind uint8

const (
	// Regular items have a subcategory below one of the configured tops.
	Regular Kind = iota
	// NoSubcategory items have a single path that stops at the top
	// ("Clothing, Shoes & Jewelry > Men"); ingest drops them.
	NoSubcategory
	// Foreign items belong to another category (Electronics, Sports &
	// Outdoors ...) or to a sibling of the tops; scoping excludes them.
	Foreign
)

// Item is one generated product.
type Item struct {
	ASIN string
	Kind Kind
	// Top indexes Config.Tops; -1 for Foreign items.
	Top int
	// Subcat indexes World.Subcats; -1 unless Kind is Regular.
	Subcat int
	// HasImage is false for the few items without an image record. In a
	// text category's world (no image records) it marks the items with
	// reviews instead: the others get none.
	HasImage bool
	// Notion is k(x) = argmax_k (G z_x)_k, the also_bought notion (eq. 3).
	Notion int
	// Reviews is the number of review lines the item gets.
	Reviews int
}

// Subcat is a subcategory directly below a top.
type Subcat struct {
	Top  int    // index into Config.Tops
	Name string // e.g. "Jackets & Coats"
	// Children are third-level nodes; an item of a subcategory with
	// children carries one of them as the last element of its path.
	Children []string

	group string // text categories at depth 2: the node between root and subcategory
	noun  string
	home  int // topic whose words fit the noun (eq. 5)
	mean  []float64
}

// Edge is a planted relationship: Dst is listed on Src's page. Ends are
// indices into World.Items. Convertible to graph.Edge.
type Edge struct {
	Src, Dst int32
}

// Graph names accepted by World.Edges.
const (
	AlsoBought     = "also_bought"
	AlsoViewed     = "also_viewed"
	BoughtTogether = "bought_together"
)

const (
	gAB = iota
	gAV
	gBT
	nGraphs
)

// denseFrac of the feature dimensions have low thresholds and fire for
// about half the items; the rest fire rarely. Without the dense ones, items
// near the latent centre activate almost nothing and a linear embedding
// recovers z poorly (R^2 0.80 against 0.93 at F = 512).
const denseFrac = 0.15

// homeBoost is added to the logit of a subcategory's home topic (eq. 5).
const homeBoost = 1.5

// maxDegree caps an out-list, as Amazon's pages do.
const maxDegree = 100

// World is a generated data set held in memory: items, latents, the planted
// relations and the parameters of the feature and text models. Features,
// metadata and reviews are computed per item on demand, so a World of the
// paper's size stays small (latents and edges only).
type World struct {
	// Config is the resolved configuration (defaults filled in).
	Config Config
	// Subcats are the subcategories of all tops, top by top.
	Subcats []Subcat
	// Items are in metadata-file order.
	Items []Item

	seed   uint64
	latent []float32 // len(Items) x D
	hidden []int32   // NoSubcategory: the subcategory its latent came from; Foreign: its path

	// Image features, eq. (4): f = s * max(0, W z + b + noise).
	featW     []float32 // F x D
	featB     []float32 // F
	featScale float64
	featNoise float64

	gate   []float64    // G, N x D
	trans  [][]float64  // T_k, D x D orthogonal
	offset [][]float64  // c_k
	wordA  [2][]float32 // a_w per noun / adjective, words x D (eq. 5)

	codec     asinCodec
	reviewers int
	idMul     uint64
	idAdd     uint64

	scoped    [][]int32 // per top: Regular items (with or without image)
	scopedSub [][]int32 // per top: the subcategory of each scoped item, beside it
	edges     [nGraphs][]Edge
	edgeStart [nGraphs][]int32 // per item: first index into edges, len(Items)+1
	records   []int32          // .b order: item index, or -(k+1) for orphan k
	orphans   int

	// Day 2 (Day): base is day 1's item count (0 on day 1), the index
	// space of the orphans' and missing list entries' ASINs; gone marks
	// the removed items.
	base int
	gone []bool
}

// dayOne is the number of items of day 1, which the ASINs of orphan
// records and of list entries in no file are counted from.
func (w *World) dayOne() int {
	if w.base > 0 {
		return w.base
	}
	return len(w.Items)
}

// NewWorld generates the world of cfg with the given seed. It holds the
// latents and planted edges in memory (about 100 MB at women scale).
func NewWorld(cfg Config, seed uint64) (*World, error) {
	c := cfg.resolved()
	if err := c.validate(); err != nil {
		return nil, err
	}
	w := &World{Config: c, seed: seed}
	g := itemStream(seed, purposeGlobal, 0).Rand
	d := c.LatentDim

	// Category tree and subcategory means mu_s ~ N(0, SubcatSpread^2 I).
	tc := c.textCat()
	for ti, t := range c.Tops {
		list := subcatList(t.Name, t.Subcats)
		if tc != nil {
			list = textSubcats(tc, t.Subcats)
		}
		for _, s := range list {
			s.Top = ti
			s.home = homeTopic(s.noun, len(w.Subcats))
			s.mean = make([]float64, d)
			for k := range s.mean {
				s.mean[k] = c.SubcatSpread * g.NormFloat64()
			}
			w.Subcats = append(w.Subcats, s)
		}
	}
	w.layout(g)
	w.codec = newASINCodec(g, seed, c.ISBNFrac)
	w.model(g)

	// Latents (eq. 1), notions (eq. 3), review counts; per-item streams.
	n := len(w.Items)
	w.latent = make([]float32, n*d)
	reviews := 0
	s := newStream()
	for i := range w.Items {
		it := &w.Items[i]
		it.ASIN = w.codec.asin(i)
		r := s.reset(seed, purposeLatent, i).Rand
		z := w.latent[i*d : (i+1)*d]
		switch it.Kind {
		case Regular, NoSubcategory:
			sub := it.Subcat
			if it.Kind == NoSubcategory {
				sub = int(w.hidden[i])
			}
			for k := range z {
				z[k] = float32(w.Subcats[sub].mean[k] + c.ItemSpread*r.NormFloat64())
			}
		default:
			sz := math.Hypot(c.SubcatSpread, c.ItemSpread)
			for k := range z {
				z[k] = float32(sz * r.NormFloat64())
			}
		}
		it.Notion = w.notion(z)
		if tc == nil {
			it.Reviews = logNormalCount(s.reset(seed, purposeCounts, i).Rand, c.ReviewsMean, c.ReviewsSpread, 2000)
		} else if it.HasImage {
			// Text: the items Table 3 counts have at least one review.
			it.Reviews = 1 + logNormalCount(s.reset(seed, purposeCounts, i).Rand, c.ReviewsMean-1, c.ReviewsSpread, 1999)
		}
		reviews += it.Reviews
	}
	w.reviewers = max(20, reviews/3)
	w.idMul = coprimeMul(g, pow36[12])
	w.idAdd = g.Uint64N(pow36[12])

	// Planted relations (eqs. 6 and 7), then bought_together.
	w.scoped = make([][]int32, len(c.Tops))
	w.scopedSub = make([][]int32, len(c.Tops))
	for i, it := range w.Items {
		if it.Kind == Regular {
			w.scoped[it.Top] = append(w.scoped[it.Top], int32(i))
			w.scopedSub[it.Top] = append(w.scopedSub[it.Top], int32(it.Subcat))
		}
	}
	// Image records in an order unrelated to the metadata's; orphans are
	// counted first because related lists name ASINs past them.
	for i, it := range w.Items {
		if it.HasImage && tc == nil {
			w.records = append(w.records, int32(i))
		}
	}
	w.orphans = int(math.Round(float64(len(w.records)) * c.OrphanFrac))

	w.plant(gAB)
	w.plant(gAV)
	w.plantBT()

	for k := range w.orphans {
		w.records = append(w.records, int32(-(k + 1)))
	}
	g.Shuffle(len(w.records), func(a, b int) { w.records[a], w.records[b] = w.records[b], w.records[a] })
	return w, nil
}

// subcatList names the first n subcategories of a top: the base list, then
// qualified variants ("Plus-Size Dresses").
func subcatList(top string, n int) []Subcat {
	bases := topBases[top]
	out := make([]Subcat, 0, n)
	for _, b := range bases {
		if len(out) == n {
			return out
		}
		out = append(out, Subcat{Name: b.name, Children: b.children, noun: b.noun})
	}
	for _, q := range topQualifiers[top] {
		for _, b := range bases {
			if len(out) == n {
				return out
			}
			out = append(out, Subcat{Name: q + " " + b.name, noun: b.noun})
		}
	}
	return out
}

// homeTopic is the topic that lists the noun ("Jacket" -> the topic with
// "jacket"), or a fixed pick when none does.
func homeTopic(noun string, k int) int {
	words := strings.Fields(strings.ToLower(noun))
	last := words[len(words)-1]
	for t, tp := range topics {
		for _, w := range tp.nouns {
			if w == last || w == last+"s" || w+"s" == last {
				return t
			}
		}
	}
	return k % len(topics)
}

// layout decides every item's kind, top and subcategory with exact counts,
// then shuffles them into file order.
func (w *World) layout(g *rand.Rand) {
	c := w.Config
	var items []Item
	var hidden []int32
	first := 0 // index of the top's first subcategory
	total := 0
	for ti, t := range c.Tops {
		// Subcategory sizes follow a Zipf-like law over a random ranking,
		// with at least min(3, Items/Subcats) items each.
		weights := make([]float64, t.Subcats)
		rank := g.Perm(t.Subcats)
		for s := range weights {
			weights[s] = math.Pow(float64(rank[s]+2), -0.9)
		}
		floor := min(3, t.Items/t.Subcats)
		counts := apportion(t.Items-floor*t.Subcats, weights)
		for s, k := range counts {
			for range k + floor {
				items = append(items, Item{Kind: Regular, Top: ti, Subcat: first + s, HasImage: true})
				hidden = append(hidden, 0)
			}
		}
		noImage := int(math.Round(float64(t.Items) * c.NoImageFrac))
		for _, s := range drawMany(g, noImage, weights) {
			items = append(items, Item{Kind: Regular, Top: ti, Subcat: first + s})
			hidden = append(hidden, 0)
		}
		noSub := int(math.Round(float64(t.Items) * c.NoSubcatFrac))
		for _, s := range drawMany(g, noSub, weights) {
			items = append(items, Item{Kind: NoSubcategory, Top: ti, Subcat: -1, HasImage: true})
			hidden = append(hidden, int32(first+s))
		}
		first += t.Subcats
		total += t.Items + noImage + noSub
	}
	foreign := int(math.Round(float64(total) * c.ForeignFrac))
	for range foreign {
		items = append(items, Item{Kind: Foreign, Top: -1, Subcat: -1, HasImage: !chance(g, c.NoImageFrac)})
		hidden = append(hidden, int32(g.IntN(len(foreignPaths))))
	}
	g.Shuffle(len(items), func(a, b int) {
		items[a], items[b] = items[b], items[a]
		hidden[a], hidden[b] = hidden[b], hidden[a]
	})
	w.Items, w.hidden = items, hidden
}

// apportion splits n in proportion to weights by largest remainders (ties
// to the lower index), so the counts sum to n exactly.
func apportion(n int, weights []float64) []int {
	sum := 0.0
	for _, v := range weights {
		sum += v
	}
	counts := make([]int, len(weights))
	rem := make([]int, len(weights))
	frac := make([]float64, len(weights))
	left := n
	for i, v := range weights {
		x := float64(n) * v / sum
		counts[i] = int(x)
		frac[i] = x - float64(counts[i])
		left -= counts[i]
		rem[i] = i
	}
	slices.SortStableFunc(rem, func(a, b int) int {
		switch {
		case frac[a] > frac[b]:
			return -1
		case frac[a] < frac[b]:
			return 1
		}
		return 0
	})
	for k := 0; k < left; k++ {
		counts[rem[k%len(rem)]]++
	}
	return counts
}

// drawMany draws n indices from unnormalised weights.
func drawMany(r *rand.Rand, n int, weights []float64) []int {
	sum := 0.0
	for _, v := range weights {
		sum += v
	}
	p := make([]float64, len(weights))
	for i, v := range weights {
		p[i] = v / sum
	}
	out := make([]int, n)
	for i := range out {
		out[i] = draw(r, p)
	}
	return out
}

// model draws the fixed parameters of the generative model.
func (w *World) model(g *rand.Rand) {
	c := w.Config
	d, f := c.LatentDim, c.FeatureDim
	sz := math.Hypot(c.SubcatSpread, c.ItemSpread) // latent std per dimension

	// Eq. (4). W's rows are random unit vectors so (W z)_j has the latent's
	// variance; the bias puts the activation threshold q_j in [0.85, 1.65]
	// standard deviations up, so 5-20 % of each dimension is non-zero.
	su := sz * math.Sqrt(1+c.FeatureNoise*c.FeatureNoise)
	w.featW = make([]float32, f*d)
	row := make([]float64, d)
	for j := range f {
		norm := 0.0
		for k := range row {
			row[k] = g.NormFloat64()
			norm += row[k] * row[k]
		}
		for k := range row {
			w.featW[j*d+k] = float32(row[k] / math.Sqrt(norm))
		}
	}
	w.featB = make([]float32, f)
	for j := range w.featB {
		q := 1.05 + 0.85*g.Float64()
		if chance(g, denseFrac) {
			q = -0.25 + 0.6*g.Float64()
		}
		w.featB[j] = float32(-q * su)
	}
	w.featNoise = c.FeatureNoise * sz
	w.featScale = 1 / su

	// Eq. (3): gate G; eq. (6): transforms T_k and offsets c_k.
	w.gate = make([]float64, c.Notions*d)
	for k := range w.gate {
		w.gate[k] = g.NormFloat64()
	}
	// The first StyleDims coordinates ("style": colour, material) are
	// kept by every notion; the rest are rotated and shifted.
	st := c.StyleDims
	for range c.Notions {
		rot := orthogonal(g, d-st)
		t := make([]float64, d*d)
		for a := range st {
			t[a*d+a] = 1
		}
		for a := range d - st {
			copy(t[(st+a)*d+st:(st+a+1)*d], rot[a*(d-st):(a+1)*(d-st)])
		}
		w.trans = append(w.trans, t)
		off := make([]float64, d)
		for k := st; k < d; k++ {
			off[k] = c.OffsetSpread * sz * g.NormFloat64()
		}
		w.offset = append(w.offset, off)
	}
	// Eq. (5): word logits a_w·z, of standard deviation TopicSharpness
	// over items.
	for k := range w.wordA {
		w.wordA[k] = make([]float32, len(wordLists[k])*d)
		for j := range w.wordA[k] {
			w.wordA[k][j] = float32(c.TopicSharpness * g.NormFloat64() / (sz * math.Sqrt(float64(d))))
		}
	}
}

// orthogonal returns a random d x d orthogonal matrix (row-major) by
// Gram-Schmidt on a Gaussian matrix.
func orthogonal(r *rand.Rand, d int) []float64 {
	q := make([]float64, d*d)
	for i := 0; i < d; i++ {
		row := q[i*d : (i+1)*d]
		for {
			for k := range row {
				row[k] = r.NormFloat64()
			}
			for j := 0; j < i; j++ {
				prev := q[j*d : (j+1)*d]
				dot := 0.0
				for k := range row {
					dot += row[k] * prev[k]
				}
				for k := range row {
					row[k] -= dot * prev[k]
				}
			}
			norm := 0.0
			for _, v := range row {
				norm += v * v
			}
			if norm > 1e-6 {
				norm = math.Sqrt(norm)
				for k := range row {
					row[k] /= norm
				}
				break
			}
		}
	}
	return q
}

func (w *World) notion(z []float32) int {
	d := len(z)
	best, bestV := 0, math.Inf(-1)
	for k := range w.Config.Notions {
		v := 0.0
		for j := range d {
			v += w.gate[k*d+j] * float64(z[j])
		}
		if v > bestV {
			best, bestV = k, v
		}
	}
	return best
}

// Latent returns item i's latent z_i (read-only).
func (w *World) Latent(i int) []float32 {
	d := w.Config.LatentDim
	return w.latent[i*d : (i+1)*d]
}

// Target returns the point an item's planted edges aim at: T_k z_x + c_k
// with k = Notion (eq. 6) for also_bought and bought_together, z_x itself
// for also_viewed (eq. 7).
func (w *World) Target(graph string, i int, dst []float64) []float64 {
	z := w.Latent(i)
	d := len(z)
	dst = slices.Grow(dst[:0], d)[:d]
	if graph == AlsoViewed {
		for k := range z {
			dst[k] = float64(z[k])
		}
		return dst
	}
	k := w.Items[i].Notion
	t, c := w.trans[k], w.offset[k]
	for a := range d {
		v := c[a]
		for b := range d {
			v += t[a*d+b] * float64(z[b])
		}
		dst[a] = v
	}
	return dst
}

// Edges returns the planted edges of a graph (also_bought, also_viewed,
// bought_together) in source order: both ends are Regular items of the same
// top in different subcategories, without duplicates. Image experiments also
// drop the ends without images. The related lists in the metadata add
// entries outside this set (see Meta). The slice must not be modified.
func (w *World) Edges(graph string) []Edge {
	switch graph {
	case AlsoBought:
		return w.edges[gAB]
	case AlsoViewed:
		return w.edges[gAV]
	case BoughtTogether:
		return w.edges[gBT]
	}
	return nil
}

// out returns item i's planted out-edges of graph gi.
func (w *World) out(gi, i int) []Edge {
	return w.edges[gi][w.edgeStart[gi][i]:w.edgeStart[gi][i+1]]
}

// plant draws the planted relation gi for every Regular item, in parallel
// chunks with per-item streams.
func (w *World) plant(gi int) {
	w.setEdges(gi, w.plantRange(gi, 0, len(w.Items)))
}

// plantRange draws the planted out-edges of graph gi of the Regular items
// lo..hi-1, in source order.
func (w *World) plantRange(gi, lo0, hi0 int) []Edge {
	c := w.Config
	purpose := purposeAlsoBought
	graph := AlsoBought
	if gi == gAV {
		purpose, graph = purposeAlsoViewed, AlsoViewed
	}
	// The paper's counts are of edges between image items; an edge's end
	// has an image with probability 1/(1+NoImageFrac).
	boost := 1 + c.NoImageFrac
	return forChunks(hi0-lo0, 2048, func(lo, hi int, s *stream) []Edge {
		var out []Edge
		target := make([]float64, c.LatentDim)
		for x := lo0 + lo; x < lo0+hi; x++ {
			it := &w.Items[x]
			if it.Kind != Regular {
				continue
			}
			r := s.reset(w.seed, purpose, x).Rand
			mean := w.Config.Tops[it.Top].AlsoBought
			if gi == gAV {
				mean = w.Config.Tops[it.Top].AlsoViewed
			}
			deg := heavyCount(r, mean*boost, maxDegree)
			target = w.Target(graph, x, target)
			start := len(out)
			taken := func(y int32) bool {
				return slices.ContainsFunc(out[start:], func(e Edge) bool { return e.Dst == y })
			}
			for range deg {
				if y := w.endpoint(r, x, target, taken); y >= 0 {
					out = append(out, Edge{int32(x), y})
				}
			}
		}
		return out
	})
}

func (w *World) setEdges(gi int, edges []Edge) {
	w.edges[gi] = edges
	start := make([]int32, len(w.Items)+1)
	for _, e := range edges {
		start[e.Src+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	w.edgeStart[gi] = start
}

// endpoint picks the destination of one planted edge from x: with
// probability EdgeNoise a uniform item of another subcategory, otherwise the
// nearest to target of M such items (eqs. 6, 7). Items already taken are
// not candidates, so a heavy item's list holds its nearest few, not one
// item found again and again. -1 if no candidate was found.
func (w *World) endpoint(r *rand.Rand, x int, target []float64, taken func(int32) bool) int32 {
	it := &w.Items[x]
	// The candidates' subcategories come from a compact array beside the
	// pool: at the paper's sizes a random Items entry is a cache miss, and
	// most of the generator's time goes to drawing candidates.
	pool, sub := w.scoped[it.Top], w.scopedSub[it.Top]
	want := int32(it.Subcat)
	other := func() int32 {
		for range 64 {
			j := r.IntN(len(pool))
			if y := pool[j]; sub[j] != want && !taken(y) {
				return y
			}
		}
		return -1
	}
	if chance(r, w.Config.EdgeNoise) {
		return other()
	}
	best, bestD := int32(-1), math.Inf(1)
	for range w.Config.Candidates {
		y := other()
		if y < 0 {
			continue
		}
		z := w.Latent(int(y))
		dist := 0.0
		for k, v := range z {
			dd := float64(v) - target[k]
			dist += dd * dd
		}
		if dist < bestD {
			best, bestD = y, dist
		}
	}
	return best
}

// plantBT takes bought_together as a short prefix of each written
// also_bought list and keeps its planted entries.
func (w *World) plantBT() {
	n := len(w.Items)
	per := forChunks(n, 2048, func(lo, hi int, s *stream) []Edge {
		var out []Edge
		for x := lo; x < hi; x++ {
			if w.Items[x].Kind != Regular {
				continue
			}
			for _, y := range w.related(s, x, gBT) {
				if w.isPlanted(x, y) && !slices.ContainsFunc(out, func(e Edge) bool { return e.Src == int32(x) && e.Dst == y }) {
					out = append(out, Edge{int32(x), y})
				}
			}
		}
		return out
	})
	w.setEdges(gBT, per)
}

// isPlanted reports whether the list entry y of x is an edge by ingest's
// rules (amazon.Subcategory, graph.CrossEdges; ignoring images): both
// Regular, same top, different subcategories.
func (w *World) isPlanted(x int, y int32) bool {
	if y < 0 || int(y) >= len(w.Items) {
		return false
	}
	a, b := &w.Items[x], &w.Items[y]
	return a.Kind == Regular && b.Kind == Regular && a.Top == b.Top && a.Subcat != b.Subcat
}

// related returns the entries of x's written list gi as item indices; an
// index >= len(Items) names an ASIN that is in no file. The list is the
// planted edges with extras inserted at random places: ASINs in no file,
// items outside the experiment (other tops, other categories, no
// subcategory), now and then one of x's own subcategory, x itself, or a
// repeated entry. bought_together is a prefix of the also_bought list.
func (w *World) related(s *stream, x, gi int) []int32 {
	if gi == gBT {
		ab := w.related(s, x, gAB)
		r := s.reset(w.seed, purposeExtras|uint64(gi)<<8, x).Rand
		l := draw(r, []float64{0.45, 0.3, 0.2, 0.05})
		return ab[:min(l, len(ab))]
	}
	r := s.reset(w.seed, purposeExtras|uint64(gi)<<8, x).Rand
	planted := w.out(gi, x)
	list := make([]int32, len(planted), len(planted)+4)
	for k, e := range planted {
		list[k] = e.Dst
	}
	n := w.dayOne() // day 2's new items are never extras, and the missing ASINs are day 1's
	insert := func(y int32) {
		at := r.IntN(len(list) + 1)
		list = slices.Insert(list, at, y)
	}
	for range poisson(r, w.Config.MissingRelated) {
		// Past every item (asins undoes the shift by day 2's new items).
		insert(int32(len(w.Items) + w.orphanSpace() + r.IntN(4*n)))
	}
	it := &w.Items[x]
	for range poisson(r, 0.3) {
		for range 20 {
			y := int32(r.IntN(n))
			if !w.isPlanted(x, y) && int(y) != x {
				insert(y)
				break
			}
		}
	}
	if it.Kind == Regular && chance(r, 0.02) {
		pool := w.scoped[it.Top]
		for range 20 {
			y := pool[r.IntN(len(pool))]
			if w.Items[y].Subcat == it.Subcat && int(y) != x {
				insert(y)
				break
			}
		}
	}
	if chance(r, 0.003) {
		insert(int32(x))
	}
	if len(list) > 0 && chance(r, 0.003) {
		insert(list[r.IntN(len(list))])
	}
	if len(list) > maxDegree {
		list = list[:maxDegree]
	}
	return list
}

// orphanSpace is the number of indices past len(Items) used by orphan
// image records; missing related ASINs come after them.
func (w *World) orphanSpace() int {
	return max(w.orphans, w.dayOne()/100+1)
}

// forChunks runs fn over [0, n) in fixed chunks on GOMAXPROCS goroutines,
// each with its own stream, and concatenates the results in chunk order.
func forChunks[T any](n, chunk int, fn func(lo, hi int, s *stream) []T) []T {
	nc := (n + chunk - 1) / chunk
	res := make([][]T, nc)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(nc, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newStream()
			for ci := range next {
				res[ci] = fn(ci*chunk, min(n, (ci+1)*chunk), s)
			}
		}()
	}
	for ci := range nc {
		next <- ci
	}
	close(next)
	wg.Wait()
	return slices.Concat(res...)
}

// Feature writes item i's image feature (eq. 4) into dst[:F], on the raw
// 0-60 scale of FC7 activations. It depends only on the world and i.
func (w *World) Feature(i int, dst []float32) {
	w.feature(w.Latent(i), itemStream(w.seed, purposeFeature, i).Rand, dst)
}

func (w *World) feature(z []float32, r *rand.Rand, dst []float32) {
	f, d := w.Config.FeatureDim, w.Config.LatentDim
	step := w.Config.FeatureStep
	for j := range f {
		u := float64(w.featB[j]) + w.featNoise*r.NormFloat64()
		row := w.featW[j*d : (j+1)*d]
		for k, v := range z {
			u += float64(row[k]) * float64(v)
		}
		if u <= 0 {
			dst[j] = 0
			continue
		}
		// 12 per standard deviation, with the tail beyond 4 deviations
		// squeezed so that no value exceeds 60 (FC7's maximum is 58.4).
		x := w.featScale * u
		if x > 4 {
			x = 4 + (x-4)/(1+(x-4))
		}
		v := 12 * x
		if step > 0 {
			v = math.Round(v/step) * step
		}
		dst[j] = float32(v)
	}
}

// orphanFeature is the record of an image whose ASIN is not in the metadata.
func (w *World) orphanFeature(k int, dst []float32) string {
	r := itemStream(w.seed, purposeOrphan, k).Rand
	z := make([]float32, w.Config.LatentDim)
	sz := math.Hypot(w.Config.SubcatSpread, w.Config.ItemSpread)
	for j := range z {
		z[j] = float32(sz * r.NormFloat64())
	}
	w.feature(z, r, dst)
	return w.codec.asin(w.dayOne() + k)
}

// Records returns the number of image records the .b file holds.
func (w *World) Records() int { return len(w.records) }

// String summarises the world.
func (w *World) String() string {
	return fmt.Sprintf("synth world %q: %d items, %d subcategories, %d also_bought, %d also_viewed, %d bought_together edges, %d image records",
		w.Config.Scale, len(w.Items), len(w.Subcats), len(w.edges[gAB]), len(w.edges[gAV]), len(w.edges[gBT]), len(w.records))
}
