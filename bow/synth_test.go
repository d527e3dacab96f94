package bow

import (
	"math"
	"math/rand/v2"
	"strings"
)

// A deterministic generator of English-like product reviews for benchmarks
// and scale tests: templates over product nouns and adjectives drawn with
// Zipf-like frequencies, so the candidate terms have a long tail (tens of
// thousands of adjective-noun pairs), plus the short stock reviews that
// repeat verbatim in real data.

var (
	synthNouns = strings.Fields(`shirt dress shoe jacket sweater coat boot sandal sock hat scarf glove
		belt bag wallet watch ring necklace bracelet earring jean pant short skirt blouse vest
		hoodie legging bra panty sneaker heel slipper loafer tie suit pajama robe swimsuit
		fabric material color size fit quality price seller shipping package box product item
		stitching seam button zipper pocket sleeve collar waist hem strap buckle sole toe heel
		lining cotton wool leather silk polyester denim nylon cashmere fleece linen suede
		daughter son wife husband mother father friend sister brother grandson granddaughter
		gift birthday christmas wedding party vacation winter summer spring fall weather
		comfort style design pattern print stripe detail logo brand picture description review
		order return exchange refund customer service money value deal bargain purchase
		work office school gym yoga running hiking travel beach church dinner night weekend
		length width inch foot arm shoulder chest hip leg neck wrist finger ankle back
		wash dryer machine iron wrinkle stain smell odor tag label thread hole tear
		month week day year time hour minute morning evening compliment problem issue`)
	synthAdjs = strings.Fields(`soft comfortable warm cute pretty beautiful nice great good perfect
		cheap expensive small large tight loose long short heavy light thin thick durable
		sturdy flimsy stylish elegant classic casual formal fancy simple plain bright dark
		black white red blue green pink purple grey brown navy yellow orange gold silver
		new old little big wide narrow true happy sad excellent awesome terrible poor bad
		wonderful lovely gorgeous amazing fantastic decent solid nice quick slow fast
		itchy scratchy smooth silky stretchy cozy breathable waterproof lightweight
		adorable sexy flattering unique fun quality sturdy wrong right extra regular`)
	synthVerbs = strings.Fields(`love like wear bought ordered returned washed received recommend
		got need wanted expected fits runs looks feels arrived shrank faded`)
	synthStock = []string{"Great product!", "Five Stars", "Love it!", "Perfect fit.", "Great gift.",
		"Exactly as described.", "Very comfortable.", "Fits great, looks great.", "Nice.", "Good value for the money."}
)

// synthRare are 3000 made-up nouns ("bravel", "monrix"): brand and model
// names, misspellings, the long tail of real review vocabularies.
var synthRare = func() []string {
	r := rand.New(rand.NewPCG(7, 7))
	on, nu, co := strings.Fields("b br c d f g gr k l m n p pr r s st t tr v z"), strings.Fields("a e i o u ou ea"), strings.Fields("l n r x ck m st ll nd")
	seen := map[string]bool{}
	var out []string
	for len(out) < 3000 {
		w := on[r.IntN(len(on))] + nu[r.IntN(len(nu))] + on[r.IntN(len(on))] + nu[r.IntN(len(nu))] + co[r.IntN(len(co))]
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()

// zipfPick draws an index in [0, n) with probability ~ 1/(i+1).
func zipfPick(r *rand.Rand, n int) int {
	// inverse transform on the continuous 1/x density over [1, n+1)
	return min(n-1, int(math.Exp(r.Float64()*math.Log(float64(n+1))))-1)
}

func synthSentence(r *rand.Rand, b *strings.Builder) {
	n := func() string {
		if r.IntN(10) == 0 {
			return synthRare[zipfPick(r, len(synthRare))]
		}
		return synthNouns[zipfPick(r, len(synthNouns))]
	}
	a := func() string { return synthAdjs[zipfPick(r, len(synthAdjs))] }
	v := func() string { return synthVerbs[r.IntN(len(synthVerbs))] }
	switch r.IntN(8) {
	case 0:
		b.WriteString("The " + a() + " " + n() + " is very " + a() + ".")
	case 1:
		b.WriteString("I " + v() + " this " + n() + " for my " + n() + " and she loves the " + a() + " " + n() + ".")
	case 2:
		b.WriteString("The " + n() + " " + v() + " " + a() + ", but the " + n() + " was a little " + a() + ".")
	case 3:
		b.WriteString("We " + v() + " a " + a() + " " + n() + " with " + a() + " " + n() + "s for the " + n() + ".")
	case 4:
		b.WriteString("It has " + a() + " " + n() + "s and a " + a() + " " + n() + ", so I " + v() + " it.")
	case 5:
		b.WriteString("My " + n() + " says the " + n() + " is " + a() + " and " + a() + "!")
	case 6:
		b.WriteString("Not " + a() + " enough for " + n() + " &amp; " + n() + ", I'm afraid.")
	default:
		b.WriteString("This is my third " + n() + " from this " + n() + "; the " + a() + " " + n() + " is " + a() + ".")
	}
}

// synthDocs generates n reviews over nItems items, in a shuffled order.
func synthDocs(r *rand.Rand, n, nItems int) []Doc {
	docs := make([]Doc, n)
	var b strings.Builder
	for i := range docs {
		b.Reset()
		if r.IntN(6) == 0 {
			b.WriteString(synthStock[r.IntN(len(synthStock))])
		} else {
			for k := 1 + r.IntN(6); k > 0; k-- {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				synthSentence(r, &b)
			}
		}
		docs[i] = Doc{Item: int32(zipfPick(r, nItems)), Text: b.String()}
	}
	return docs
}
