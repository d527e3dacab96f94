package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Review templates. {A} is an adjective and {N} a noun, both drawn from the
// sentence's topic (or from the filler lists); {P} is the item's product noun
// ("jacket"), {B} "is" or "are" to agree with the preceding noun.
var templates = []string{
	"The {A} {N} fits well.",
	"I love this {A} {N}.",
	"The {N} {B} very {A}.",
	"This {N} {B} {A} and {A}.",
	"My wife loves the {A} {N}.",
	"It has a {A} {N} and a {A} {N}.",
	"The {N} feels {A}.",
	"I bought this {P} for my husband and the {N} {B} {A}.",
	"It's a {A} {P} with a {A} {N}.",
	"I don't like the {A} {N}.",
	"The {N} looks {A} in person.",
	"You can't beat the {A} {N}.",
	"My daughter's {N} was too {A}.",
	"The {A} {N} on this {P} is {A}.",
	"We ordered the {A} {P} because the {N} {B} {A}.",
	"Overall a {A} {P} with {A} {N}.",
}

// Sentences without slots, mixed in for realism.
var fillerSentences = []string{
	"Great quality for the price.",
	"I would buy it again.",
	"Shipping was fast.",
	"It's exactly what I wanted.",
	"Don't hesitate to order it.",
	"I'm very happy with it.",
	"Highly recommended.",
	"It runs a little small, so order a size up.",
	"I wore it to a café and got compliments.",
	"Returned it… then bought it again.",
}

var positiveSummaries = []string{"Love it", "Great {N}", "{A} {P}", "Five Stars", "Perfect!", "Just what I needed", "Very {A}"}
var negativeSummaries = []string{"Too small", "Disappointed", "Not as pictured", "Runs small", "Didn't fit", "Cheap {N}", "Too {A}"}

// plurals take "are".
var plurals = map[string]bool{
	"jeans": true, "shorts": true, "socks": true, "pajamas": true, "sunglasses": true,
	"tights": true,
}

// The review words. Every topic noun and adjective (words.go) is a word of
// the review model with its own logit weights a_w (World.model): an item's
// noun slots draw from p_N(z) = softmax_w(a_w·z + h_w) over the nouns, its
// adjective slots likewise over the adjectives (package doc, eq. 5), so
// every topical word of a review is a noisy reading of the item's latent
// position, as every image dimension is (eq. 4). The share of slots that
// are about what the item is bought with (Config.PairedShare) draws from
// the same distributions at its also_bought target T_k z + c_k instead
// (eq. 5b).
var wordLists = func() (l [2][]string) {
	seen := map[string]bool{}
	for _, tp := range topics {
		for k, ws := range [2][]string{tp.nouns, tp.adjs} {
			for _, w := range ws {
				if !seen[w] {
					seen[w] = true
					l[k] = append(l[k], w)
				}
			}
		}
	}
	return l
}()

const (
	nounWords = 0
	adjWords  = 1
)

// inTopic[k][t] lists the indices into wordLists[k] of topic t's words.
var inTopic = func() (in [2][][]int) {
	for k := range 2 {
		at := map[string]int{}
		for j, w := range wordLists[k] {
			at[w] = j
		}
		for _, tp := range topics {
			ws := tp.nouns
			if k == adjWords {
				ws = tp.adjs
			}
			var idx []int
			for _, w := range ws {
				idx = append(idx, at[w])
			}
			in[k] = append(in[k], idx)
		}
	}
	return in
}()

// wordDists returns item i's cumulative word distributions (nouns,
// adjectives) at its own latent (eq. 5) and at its also_bought target
// (eq. 5b). Foreign items have no target; theirs is their own latent.
func (w *World) wordDists(i int) (own, paired [2][]float64) {
	z := w.Latent(i)
	lat := make([]float64, len(z))
	for k, v := range z {
		lat[k] = float64(v)
	}
	home := -1
	switch it := &w.Items[i]; it.Kind {
	case Regular:
		home = w.Subcats[it.Subcat].home
	case NoSubcategory:
		home = w.Subcats[w.hidden[i]].home
	}
	target := lat
	if w.Items[i].Kind != Foreign {
		target = w.Target(AlsoBought, i, nil)
	}
	for k := range 2 {
		own[k] = w.wordSoftmax(k, lat, home)
		paired[k] = w.wordSoftmax(k, target, -1)
	}
	return own, paired
}

// wordSoftmax is the cumulative softmax(a_w·z + h_w) over word list k, h_w
// = homeBoost for the words of topic home (none if -1).
func (w *World) wordSoftmax(k int, z []float64, home int) []float64 {
	d := len(z)
	a := w.wordA[k]
	p := make([]float64, len(wordLists[k]))
	for j := range p {
		s := 0.0
		for b := range d {
			s += float64(a[j*d+b]) * z[b]
		}
		p[j] = s
	}
	if home >= 0 {
		for _, j := range inTopic[k][home] {
			p[j] += homeBoost
		}
	}
	hi := math.Inf(-1)
	for _, v := range p {
		hi = max(hi, v)
	}
	sum := 0.0
	for j, v := range p {
		sum += math.Exp(v - hi)
		p[j] = sum
	}
	for j := range p {
		p[j] /= sum
	}
	return p
}

// drawCum picks an index from a cumulative distribution ending at 1.
func drawCum(r *rand.Rand, cum []float64) int {
	j, _ := slices.BinarySearch(cum, r.Float64())
	return min(j, len(cum)-1)
}

// draw picks an index from weights summing to 1.
func draw(r *rand.Rand, weights []float64) int {
	u := r.Float64()
	for i, p := range weights {
		u -= p
		if u < 0 {
			return i
		}
	}
	return len(weights) - 1
}

// sentenceWriter fills templates for one item.
type sentenceWriter struct {
	r       *rand.Rand
	own     [2][]float64 // cumulative word distributions at the item (eq. 5)
	paired  [2][]float64 // at its also_bought target (eq. 5b); nil: none
	pShare  float64      // share of sentences drawn from paired
	product string       // lower-case product noun
	cur     *[2][]float64
}

func (s *sentenceWriter) word(kind byte) string {
	switch kind {
	case 'A':
		if chance(s.r, 0.85) {
			return wordLists[adjWords][drawCum(s.r, s.cur[adjWords])]
		}
		return pick(s.r, fillerAdjs)
	case 'N':
		if chance(s.r, 0.85) {
			return wordLists[nounWords][drawCum(s.r, s.cur[nounWords])]
		}
		return pick(s.r, fillerNouns)
	}
	return s.product
}

// fill expands one template; a sentence is about the item or, with
// probability pShare, about what it is bought with.
func (s *sentenceWriter) fill(b *strings.Builder, tmpl string) {
	s.cur = &s.own
	if s.paired[0] != nil && chance(s.r, s.pShare) {
		s.cur = &s.paired
	}
	out := make([]byte, 0, 2*len(tmpl))
	last := ""
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '{' || i+2 >= len(tmpl) || tmpl[i+2] != '}' {
			out = append(out, tmpl[i])
			continue
		}
		k := tmpl[i+1]
		i += 2
		var v string
		if k == 'B' {
			v = "is"
			if plurals[last] {
				v = "are"
			}
		} else {
			v = s.word(k)
			last = v
		}
		if len(out) == 0 {
			v = strings.ToUpper(v[:1]) + v[1:]
		}
		if strings.IndexByte("aeiou", v[0]) >= 0 && len(out) >= 3 && string(out[len(out)-3:]) == " a " {
			out = append(out[:len(out)-1], "n "...)
		}
		out = append(out, v...)
	}
	b.Write(out)
}

// reviewText writes a review: one to eight sentences, with the occasional
// HTML entity that real review text carries.
func (s *sentenceWriter) reviewText() string {
	var b strings.Builder
	n := 1 + min(poisson(s.r, 6), 15)
	for j := range n {
		if j > 0 {
			b.WriteByte(' ')
		}
		if chance(s.r, 0.15) {
			b.WriteString(pick(s.r, fillerSentences))
			continue
		}
		s.fill(&b, pick(s.r, templates))
	}
	if chance(s.r, 0.03) {
		b.WriteString(" My friend called it &quot;")
		s.cur = &s.own
		b.WriteString(s.word('A'))
		b.WriteString("&quot;.")
	}
	text := b.String()
	if chance(s.r, 0.04) {
		text = strings.Replace(text, " and ", " &amp; ", 1)
	}
	return text
}

// Review is one generated review line. ReviewText and Summary are the text
// written to the file (JSON-decoded), entities and all.
type Review struct {
	ReviewerID     string
	ASIN           string
	ReviewerName   string // "" when the field is absent
	Helpful        [2]int
	ReviewText     string
	Overall        float64
	Summary        string
	UnixReviewTime int64
	ReviewTime     string
}

var (
	reviewEpoch = time.Date(2006, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	reviewDays  = int(time.Date(2014, 7, 23, 0, 0, 0, 0, time.UTC).Sub(time.Date(2006, 1, 1, 0, 0, 0, 0, time.UTC)).Hours() / 24)
)

// Reviews generates item i's reviews (World.Items[i].Reviews of them). The
// result depends only on the world and i.
func (w *World) Reviews(i int) []Review {
	it := &w.Items[i]
	if it.Reviews == 0 {
		return nil
	}
	r := itemStream(w.seed, purposeReviews, i).Rand
	own, paired := w.wordDists(i)
	s := sentenceWriter{r: r, own: own, paired: paired, pShare: w.Config.PairedShare, product: strings.ToLower(w.productNoun(i))}
	out := make([]Review, it.Reviews)
	for j := range out {
		rv := &out[j]
		rv.ASIN = it.ASIN
		who := int(float64(w.reviewers) * math.Pow(r.Float64(), 3))
		rv.ReviewerID = w.reviewerID(who)
		rv.ReviewerName = w.reviewerName(who)
		rv.Overall = float64(1 + draw(r, []float64{0.05, 0.06, 0.1, 0.2, 0.59}))
		votes := heavyCount(r, 0.8, 60)
		yes := 0
		for range votes {
			if chance(r, 0.7) {
				yes++
			}
		}
		rv.Helpful = [2]int{yes, votes}
		rv.ReviewText = s.reviewText()
		sums := positiveSummaries
		if rv.Overall <= 2 {
			sums = negativeSummaries
		}
		var b strings.Builder
		s.fill(&b, pick(r, sums))
		rv.Summary = b.String()
		rv.UnixReviewTime = reviewEpoch + int64(r.IntN(reviewDays))*86400
		rv.ReviewTime = time.Unix(rv.UnixReviewTime, 0).UTC().Format("01 2, 2006")
	}
	return out
}

// ReviewTexts returns the reviewText fields of item i's reviews.
func (w *World) ReviewTexts(i int) []string {
	rs := w.Reviews(i)
	out := make([]string, len(rs))
	for j := range rs {
		out[j] = rs[j].ReviewText
	}
	return out
}

// reviewerID is "A" and 13 upper-case base-36 characters; the last 12 are a
// bijection of the reviewer's index, so IDs are unique.
func (w *World) reviewerID(who int) string {
	v := mulmod(uint64(who), w.idMul, pow36[12]) + w.idAdd
	return "A" + string(alnum[1+mix(uint64(who))%35]) + base36((v)%pow36[12], 12)
}

// reviewerName is a stable function of the reviewer's index.
func (w *World) reviewerName(who int) string {
	h := mix(uint64(who) ^ w.seed)
	switch h % 40 {
	case 0:
		return ""
	case 1, 2:
		return "Amazon Customer"
	}
	first := firstNames[(h>>8)%uint64(len(firstNames))]
	last := lastNames[(h>>16)%uint64(len(lastNames))]
	if h>>24%3 == 0 {
		return fmt.Sprintf("%s %c.", first, last[0])
	}
	return first + " " + last
}
