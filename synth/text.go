package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// pairedShare is the share of templated sentences about what the item is
// bought with: their topic is drawn from the topics of the item's
// also_bought target T_k z_x + c_k (eq. 6) instead of its own, so an item's
// reviews share words with the items it is bought with, as real reviews do
// ("goes well with my leather belt"). Without it related and unrelated
// items share words about equally and a distance on words has nothing to
// learn on also_bought (package doc, eq. 5b).
const pairedShare = 0.5

// topicWeights is an item's topic distribution, theta = softmax(A z + h)
// with h the home-topic boost of its subcategory (package doc, eq. 5).
func (w *World) topicWeights(i int, theta []float64) {
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
	w.topicSoftmax(lat, home, theta)
}

// pairedWeights is the topic distribution of item i's sentences about what
// it is bought with: softmax(A t) at its also_bought target t (eq. 5b).
func (w *World) pairedWeights(i int, theta []float64) {
	w.topicSoftmax(w.Target(AlsoBought, i, nil), -1, theta)
}

// topicSoftmax sets theta = softmax(A z + h), h the boost of topic home
// (none if -1).
func (w *World) topicSoftmax(z []float64, home int, theta []float64) {
	d := len(z)
	hi := math.Inf(-1)
	for t := range theta {
		s := 0.0
		for k := range d {
			s += float64(w.topicA[t*d+k]) * z[k]
		}
		if t == home {
			s += homeBoost
		}
		theta[t] = s
		hi = max(hi, s)
	}
	sum := 0.0
	for t := range theta {
		theta[t] = math.Exp(theta[t] - hi)
		sum += theta[t]
	}
	for t := range theta {
		theta[t] /= sum
	}
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
	theta   []float64
	paired  []float64 // topics of what the item is bought with (pairedShare)
	product string    // lower-case product noun
	topic   topic
}

func (s *sentenceWriter) word(kind byte) string {
	switch kind {
	case 'A':
		if chance(s.r, 0.75) {
			return pick(s.r, s.topic.adjs)
		}
		return pick(s.r, fillerAdjs)
	case 'N':
		if chance(s.r, 0.75) {
			return pick(s.r, s.topic.nouns)
		}
		return pick(s.r, fillerNouns)
	}
	return s.product
}

// fill expands one template, each sentence drawing its own topic from theta.
func (s *sentenceWriter) fill(b *strings.Builder, tmpl string) {
	weights := s.theta
	if s.paired != nil && chance(s.r, pairedShare) {
		weights = s.paired
	}
	s.topic = topics[draw(s.r, weights)]
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
	n := 1 + min(poisson(s.r, 2.2), 7)
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
		s.topic = topics[draw(s.r, s.theta)]
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
	theta := make([]float64, len(topics))
	w.topicWeights(i, theta)
	paired := make([]float64, len(topics))
	w.pairedWeights(i, paired)
	s := sentenceWriter{r: r, theta: theta, paired: paired, product: strings.ToLower(w.productNoun(i))}
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
