package synth

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrConfig marks an invalid Config or an unknown scale name.
var ErrConfig = errors.New("synth: invalid config")

// Top is one top-level category under "Clothing, Shoes & Jewelry".
type Top struct {
	// Name is one of Men, Women, Boys, Girls, Baby.
	Name string
	// Subcats is the number of subcategories directly below the top (the
	// paper's Table 1 counts at depth 1).
	Subcats int
	// Items is the number of items with a subcategory and an image record:
	// what an image experiment on this top keeps. Items without images,
	// without a subcategory or from other categories come on top of it.
	Items int
	// AlsoBought and AlsoViewed are the mean out-degrees of the planted
	// relation between the Items (paper Table 1: edges / items).
	AlsoBought, AlsoViewed float64
}

// Config describes a synthetic world. Zero fields take the default named on
// each; a negative fraction means "none".
type Config struct {
	// Scale is the name the config came from (informative only).
	Scale string
	// Name is the data set name in the file names (meta_<Name>.json.gz);
	// if empty, Clothing_Shoes_and_Jewelry.
	Name string
	// Tops are the top-level categories; at least one.
	Tops []Top

	// FeatureDim is F, the image-feature dimension. If 0, 4096.
	FeatureDim int
	// LatentDim is D, the latent dimension. If 0, 8.
	LatentDim int
	// Notions is the number of also_bought notions (transforms). If 0, 4.
	Notions int
	// Candidates is M, how many random candidates each planted edge chooses
	// its endpoint from. If 0, 128.
	Candidates int
	// StyleDims is how many latent coordinates every notion keeps (T_k is
	// the identity on them): the part of also_bought a metric can explain.
	// If 0, 2; negative means none.
	StyleDims int
	// SubcatSpread is the standard deviation of subcategory means. If 0, 0.6.
	SubcatSpread float64
	// ItemSpread is the standard deviation of an item's latent around its
	// subcategory's mean. If 0, 1.
	ItemSpread float64
	// OffsetSpread is the standard deviation of the notion offsets c_k, in
	// units of the latent standard deviation. If 0, 0.25.
	OffsetSpread float64
	// EdgeNoise is the fraction of planted edges whose endpoint is drawn
	// uniformly from the other subcategories instead. If 0, 0.05.
	EdgeNoise float64
	// FeatureNoise is the standard deviation of the per-dimension feature
	// noise, in units of the latent standard deviation. If 0, 0.5.
	FeatureNoise float64
	// FeatureStep rounds feature values to multiples of it (so gzip can
	// compress them). If 0, no rounding.
	FeatureStep float64
	// TopicSharpness is the standard deviation over items of a review
	// word's logit a_w·z (package doc, eq. 5). If 0, 4.
	TopicSharpness float64
	// ReviewsMean is the mean number of reviews per item, drawn from a
	// log-normal law (floored). If 0, 12.
	ReviewsMean float64
	// ReviewsSpread is the log-normal's standard deviation of the log of
	// reviews per item. If 0, 1.
	ReviewsSpread float64
	// PairedShare is the share of review sentences about what the item is
	// bought with: their words are drawn at its also_bought target
	// (package doc, eq. 5b). If 0, 0.2; negative means none.
	PairedShare float64

	// NoImageFrac adds this fraction of each top's Items as items that have
	// a subcategory but no image record. If 0, 0.03.
	NoImageFrac float64
	// NoSubcatFrac adds this fraction of each top's Items as items whose
	// only path stops at the top ("... > Men"). If 0, 0.005.
	NoSubcatFrac float64
	// ForeignFrac adds this fraction of all items as items of other
	// categories (Electronics, Sports & Outdoors ...). If 0, 0.01.
	ForeignFrac float64
	// SecondPathFrac is the fraction of items with a second category path.
	// If 0, 0.06.
	SecondPathFrac float64
	// ISBNFrac is the fraction of ASINs that are ISBN-10s. If 0, 0.03.
	ISBNFrac float64
	// MissingRelated is the mean number of entries per related list that
	// name ASINs in no file. If 0, 0.6.
	MissingRelated float64
	// OrphanFrac adds this fraction of image records whose ASIN is not in
	// the metadata. If 0, 0.002.
	OrphanFrac float64
}

// Per-top mean degrees from the paper's Table 1 (edges / items).
const (
	menAB, menAV     = 1075547.0 / 306215, 635610.0 / 306215
	womenAB, womenAV = 1923952.0 / 659566, 1691121.0 / 659566
	boysAB, boysAV   = 169503.0 / 42156, 75689.0 / 42156
	girlsAB, girlsAV = 191964.0 / 56593, 97881.0 / 56593
	babyAB, babyAV   = 96253.0 / 36588, 95784.0 / 36588
)

// Scales lists the names Scale accepts: the clothing worlds, then the
// paper's text categories (Table 3), then "table3", all seven of them.
var Scales = []string{"tiny", "small", "medium", "women", "men", "boys", "girls", "baby",
	"elect", "auto", "games", "movies", "office", "home", "phones", "table3"}

// ScaleSet returns the worlds a scale name stands for: one for every name
// but "table3", which is the seven text categories of Table 3, each written
// to its own files.
func ScaleSet(name string) ([]Config, error) {
	if name == "table3" {
		out := make([]Config, len(textCategories))
		for i := range textCategories {
			out[i] = textConfig(&textCategories[i])
		}
		return out, nil
	}
	c, err := Scale(name)
	if err != nil {
		return nil, err
	}
	return []Config{c}, nil
}

// Shrunk returns c with every top's Items multiplied by f (0 < f <= 1), at
// least twice its Subcats: the same world at a reduced size, for tests and
// trial runs. Mean degrees and review counts per item are unchanged, so
// edges and reviews shrink with the items.
func (c Config) Shrunk(f float64) (Config, error) {
	if !(f > 0 && f <= 1) {
		return Config{}, fmt.Errorf("%w: size fraction %g outside (0, 1]", ErrConfig, f)
	}
	c.Tops = append([]Top(nil), c.Tops...)
	for i := range c.Tops {
		c.Tops[i].Items = max(2*c.Tops[i].Subcats, int(math.Round(float64(c.Tops[i].Items)*f)))
	}
	return c, nil
}

// Scale returns the named configuration:
//
//	tiny    Men 6 + Women 8 subcategories, 1,900 image items and as many without (the committed demo data)
//	small   five tops, 52 subcategories, 20,000 image items
//	medium  five tops with the paper's subcategory counts, 100,000 image items
//	women   Women, 116 subcategories, 659,566 image items: the paper's largest set
//	men, boys, girls, baby
//	        one other top of Table 1 at the paper's size (Baby: 6
//	        subcategories, 36,588 image items), so that any Table 2
//	        experiment can run at full size
//	elect, auto, games, movies, office, home, phones
//	        one text category of Table 3 at the paper's size (Electronics:
//	        306 subcategories, 412,082 items with reviews, 1,654,552
//	        also_bought and 718,361 also_viewed edges), no image features
func Scale(name string) (Config, error) {
	for i := range textCategories {
		if textCategories[i].scale == name {
			return textConfig(&textCategories[i]), nil
		}
	}
	var c Config
	switch name {
	case "tiny":
		c.Tops = []Top{
			{"Men", 6, 1200, menAB, menAV},
			{"Women", 8, 700, womenAB, womenAV},
		}
		c.FeatureStep = 1.0 / 16
		// As many items again without an image: the bag-of-words demo
		// gets twice the items and four times the pairs (issue 28), at the
		// cost of reviews only (no image records).
		c.NoImageFrac = 1
	case "small":
		c.Tops = []Top{
			{"Men", 12, 6000, menAB, menAV},
			{"Women", 20, 9000, womenAB, womenAV},
			{"Boys", 8, 2000, boysAB, boysAV},
			{"Girls", 8, 2000, girlsAB, girlsAV},
			{"Baby", 4, 1000, babyAB, babyAV},
		}
	case "medium":
		// The paper's items scaled by 100,000 / 1,101,118.
		c.Tops = []Top{
			{"Men", 56, 27810, menAB, menAV},
			{"Women", 116, 59900, womenAB, womenAV},
			{"Boys", 41, 3828, boysAB, boysAV},
			{"Girls", 44, 5140, girlsAB, girlsAV},
			{"Baby", 6, 3322, babyAB, babyAV},
		}
	case "women":
		c.Tops = []Top{{"Women", 116, 659566, womenAB, womenAV}}
	case "men":
		c.Tops = []Top{{"Men", 56, 306215, menAB, menAV}}
	case "boys":
		c.Tops = []Top{{"Boys", 41, 42156, boysAB, boysAV}}
	case "girls":
		c.Tops = []Top{{"Girls", 44, 56593, girlsAB, girlsAV}}
	case "baby":
		c.Tops = []Top{{"Baby", 6, 36588, babyAB, babyAV}}
	case "table3":
		return Config{}, fmt.Errorf("%w: scale table3 is seven worlds (ScaleSet)", ErrConfig)
	default:
		return Config{}, fmt.Errorf("%w: unknown scale %q (want one of %s)", ErrConfig, name, strings.Join(Scales, ", "))
	}
	c.Scale = name
	return c, nil
}

// resolved returns c with every zero field set to its default.
func (c Config) resolved() Config {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		} else if *v < 0 {
			*v = 0
		}
	}
	defInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defInt(&c.FeatureDim, 4096)
	defInt(&c.LatentDim, 8)
	defInt(&c.Notions, 4)
	defInt(&c.Candidates, 128)
	if c.StyleDims == 0 {
		c.StyleDims = 2
	} else if c.StyleDims < 0 {
		c.StyleDims = 0
	}
	def(&c.SubcatSpread, 0.6)
	def(&c.ItemSpread, 1)
	def(&c.OffsetSpread, 0.25)
	def(&c.EdgeNoise, 0.05)
	def(&c.FeatureNoise, 0.5)
	def(&c.FeatureStep, -1)
	def(&c.TopicSharpness, 4)
	def(&c.ReviewsMean, 12)
	def(&c.ReviewsSpread, 1)
	def(&c.PairedShare, 0.2)
	def(&c.NoImageFrac, 0.03)
	def(&c.NoSubcatFrac, 0.005)
	def(&c.ForeignFrac, 0.01)
	def(&c.SecondPathFrac, 0.06)
	def(&c.ISBNFrac, 0.03)
	def(&c.MissingRelated, 0.6)
	def(&c.OrphanFrac, 0.002)
	if c.Name == "" {
		c.Name = "Clothing_Shoes_and_Jewelry"
	}
	c.Tops = append([]Top(nil), c.Tops...)
	return c
}

// validate checks a resolved config.
func (c Config) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, a...)...)
	}
	if len(c.Tops) == 0 {
		return bad("no tops")
	}
	seen := map[string]bool{}
	for i, t := range c.Tops {
		bases, ok := topBases[t.Name]
		limit := len(bases) * (1 + len(topQualifiers[t.Name]))
		if tc := textCategoryOf(t.Name); tc != nil {
			// A text category is a root of its own: a world holds one.
			if len(c.Tops) > 1 {
				return bad("Tops[%d]: text category %q must be the only top", i, t.Name)
			}
			ok, limit = true, len(tc.bases)*(1+len(tc.qualifiers))
		}
		if !ok {
			return bad("Tops[%d]: unknown top %q (want Men, Women, Boys, Girls, Baby or a Table 3 category)", i, t.Name)
		}
		if seen[t.Name] {
			return bad("Tops[%d]: %s listed twice", i, t.Name)
		}
		seen[t.Name] = true
		if t.Subcats < 1 || t.Subcats > limit {
			return bad("Tops[%d] (%s): Subcats %d outside [1, %d]", i, t.Name, t.Subcats, limit)
		}
		if t.Items < 2*t.Subcats {
			return bad("Tops[%d] (%s): Items %d below twice Subcats", i, t.Name, t.Items)
		}
		if t.AlsoBought < 0 || t.AlsoViewed < 0 || t.AlsoBought > 50 || t.AlsoViewed > 50 {
			return bad("Tops[%d] (%s): mean degrees must lie in [0, 50]", i, t.Name)
		}
	}
	if len(c.Tops) == 1 && c.Tops[0].Subcats < 2 {
		return bad("a single top needs at least 2 subcategories for cross-subcategory edges")
	}
	if c.FeatureDim < 1 || c.LatentDim < 1 || c.Notions < 1 || c.Candidates < 1 {
		return bad("FeatureDim, LatentDim, Notions and Candidates must be positive")
	}
	if c.StyleDims >= c.LatentDim {
		return bad("StyleDims %d must be below LatentDim %d", c.StyleDims, c.LatentDim)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"EdgeNoise", c.EdgeNoise}, {"NoImageFrac", c.NoImageFrac}, {"NoSubcatFrac", c.NoSubcatFrac},
		{"ForeignFrac", c.ForeignFrac}, {"SecondPathFrac", c.SecondPathFrac}, {"ISBNFrac", c.ISBNFrac},
		{"OrphanFrac", c.OrphanFrac},
	} {
		if f.v > 1 {
			return bad("%s %g above 1", f.name, f.v)
		}
	}
	return nil
}
