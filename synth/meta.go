package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Rank is one salesRank entry.
type Rank struct {
	Category string
	Rank     int64
}

// Meta is the content of one metadata line, with text fields as a reader
// returns them after HTML unescaping. On the line itself some characters of
// Title, Brand and the category names are written as entities (&amp;,
// &quot;, &#x92; for U+2019, &eacute;, &nbsp;) and escaped the way Python 2's
// repr does. Empty strings and nil slices are absent fields.
type Meta struct {
	ASIN     string
	Title    string
	Brand    string
	Price    float64
	HasPrice bool
	ImURL    string
	// SalesRank has at most one entry, as in the 2014 clothing file.
	SalesRank  []Rank
	Categories [][]string
	// The related lists, as written: planted edges plus ASINs in no file,
	// items outside the experiment, and rare self-links and repeats.
	AlsoBought, AlsoViewed, BoughtTogether []string
	// Description is written but not HTML-unescaped by readers; it carries
	// the control-character escapes (\x0b) that titles do not.
	Description string
}

// productNoun is the noun item i's title and reviews use ("Jacket").
func (w *World) productNoun(i int) string {
	it := &w.Items[i]
	switch it.Kind {
	case Regular:
		return w.Subcats[it.Subcat].noun
	case NoSubcategory:
		return w.Subcats[w.hidden[i]].noun
	}
	return foreignNouns[mix(uint64(i))%uint64(len(foreignNouns))]
}

// Meta returns item i's metadata. It depends only on the world and i.
func (w *World) Meta(i int) Meta {
	return w.meta(newStream(), i)
}

func (w *World) meta(s *stream, i int) Meta {
	it := &w.Items[i]
	m := Meta{ASIN: it.ASIN}
	m.AlsoBought = w.asins(w.related(s, i, gAB))
	m.AlsoViewed = w.asins(w.related(s, i, gAV))
	m.BoughtTogether = w.asins(w.related(s, i, gBT))

	r := s.reset(w.seed, purposeMeta, i).Rand
	// Categories.
	switch it.Kind {
	case Regular:
		sub := &w.Subcats[it.Subcat]
		path := w.subcatPath(sub)
		if len(sub.Children) > 0 {
			path = append(path, pick(r, sub.Children))
		}
		m.Categories = [][]string{path}
		if chance(r, w.Config.SecondPathFrac) {
			var second []string
			if chance(r, 0.25) {
				// Another subcategory of the same top, always second: the
				// first matching path decides (amazon.Subcategory).
				o := w.Subcats[firstSubcat(w.Subcats, it.Top)+r.IntN(w.Config.Tops[it.Top].Subcats)]
				second = w.subcatPath(&o)
				m.Categories = append(m.Categories, second)
			} else {
				second = pick(r, secondPaths)
				if chance(r, 0.5) {
					m.Categories = append([][]string{second}, m.Categories...)
				} else {
					m.Categories = append(m.Categories, second)
				}
			}
		}
	case NoSubcategory:
		m.Categories = [][]string{w.topPath(int(w.hidden[i]))}
	default:
		m.Categories = [][]string{foreignPaths[w.hidden[i]]}
	}

	if chance(r, 0.85) {
		m.Brand = pick(r, brands)
	}
	if chance(r, 0.97) {
		m.Title = w.title(r, i, m.Brand)
	}
	if chance(r, 0.7) {
		m.Price = math.Round(math.Exp(3+0.7*r.NormFloat64())*100) / 100
		m.Price = max(m.Price, 0.01)
		m.HasPrice = true
	}
	if chance(r, 0.95) {
		const urlChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-"
		var b strings.Builder
		b.WriteString("http://ecx.images-amazon.com/images/I/")
		for range 11 {
			b.WriteByte(urlChars[r.IntN(len(urlChars))])
		}
		b.WriteString(pick(r, []string{"._SX342_.jpg", "._SY300_.jpg", ".jpg", "._SX395_.jpg"}))
		m.ImURL = b.String()
	}
	if chance(r, 0.75) {
		cat := pick(r, salesRankCategories)
		if it.Kind == Foreign {
			cat = m.Categories[0][0]
		}
		m.SalesRank = []Rank{{cat, int64(math.Exp(r.Float64() * math.Log(3e6)))}}
	}
	if chance(r, 0.35) {
		m.Description = w.description(r, i)
	}
	return m
}

// subcatPath is the category path of a subcategory: root, top (clothing)
// or group (text categories at depth 2), name.
func (w *World) subcatPath(sub *Subcat) []string {
	if w.Config.textCat() == nil {
		return []string{rootCategory, w.Config.Tops[sub.Top].Name, sub.Name}
	}
	p := []string{w.Config.Tops[sub.Top].Name}
	if sub.group != "" {
		p = append(p, sub.group)
	}
	return append(p, sub.Name)
}

// topPath is the path of an item without a subcategory whose latent came
// from subcategory s: it stops one level above the subcategories.
func (w *World) topPath(s int) []string {
	p := w.subcatPath(&w.Subcats[s])
	return p[:len(p)-1]
}

// firstSubcat returns the index of top's first subcategory.
func firstSubcat(subs []Subcat, top int) int {
	for k, s := range subs {
		if s.Top == top {
			return k
		}
	}
	return 0
}

func (w *World) asins(idx []int32) []string {
	if len(idx) == 0 {
		return nil
	}
	out := make([]string, len(idx))
	for k, y := range idx {
		if int(y) < len(w.Items) {
			out[k] = w.Items[y].ASIN
		} else {
			out[k] = w.codec.asin(int(y) - len(w.Items) + w.dayOne())
		}
	}
	return out
}

// title builds a product title with the quirks of real ones: possessives
// (which make Python choose double quotes), inch marks (which then force
// \'), accents, trademark signs, a no-break space, and now and then a tab,
// a newline or a backslash.
func (w *World) title(r *rand.Rand, i int, brand string) string {
	it := &w.Items[i]
	var parts []string
	if brand != "" && chance(r, 0.8) {
		b := brand
		if chance(r, 0.04) {
			b += "\u2122"
		}
		parts = append(parts, b)
	}
	if tw := topTitleWord[w.Config.Tops[max(it.Top, 0)].Name]; it.Kind != Foreign && tw != "" {
		parts = append(parts, tw)
	}
	if chance(r, 0.7) {
		parts = append(parts, pick(r, titleStyles))
	}
	parts = append(parts, w.productNoun(i))
	t := strings.Join(parts, " ")
	if chance(r, 0.6) {
		t += ", " + pick(r, colors)
	}
	switch u := r.Float64(); {
	case u < 0.08:
		t += fmt.Sprintf(", %d\" Length", 6+r.IntN(30))
	case u < 0.12:
		t += ", Size\u00a0" + pick(r, []string{"S", "M", "L", "XL"})
	case u < 0.15:
		t += " \u2013 Pack of " + fmt.Sprint(2+r.IntN(5))
	case u < 0.17:
		t += " \"" + pick(r, titleStyles) + "\" Edition"
	case u < 0.18:
		t += "\t" + pick(r, colors)
	case u < 0.19:
		t += "\nNew"
	case u < 0.195:
		t += " S\\M\\L"
	}
	return t
}

// description writes one to three review-like sentences with the escapes
// only descriptions carry.
func (w *World) description(r *rand.Rand, i int) string {
	own, _ := w.wordDists(i)
	s := sentenceWriter{r: r, own: own, product: strings.ToLower(w.productNoun(i))}
	var b strings.Builder
	for j := range 1 + r.IntN(3) {
		if j > 0 {
			b.WriteString(pick(r, []string{" ", "\n", "\n\n", "\t"}))
		}
		s.fill(&b, pick(r, templates))
	}
	if chance(r, 0.04) {
		b.WriteString("\x0b")
	}
	if chance(r, 0.05) {
		b.WriteString(" \"Classic\" fit.")
	}
	return b.String()
}
