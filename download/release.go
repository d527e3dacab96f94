package download

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"monomer/internal/nearest"
)

// Sentinel errors. ErrUsage: a release, category, kind or mirror the
// command line names does not exist (the message lists what does).
var (
	ErrUsage = errors.New("download: usage")
	// ErrNotFound: the server answered 404, 403, 410 or another final
	// refusal (Fetch's doc): the file is not there, and asking again will
	// not put it there.
	ErrNotFound = errors.New("not found at the origin")
	// ErrUnavailable: a network failure, a timeout, a 5xx (or 429)
	// answer or an end of file not confirmed, still so after the retries:
	// a later run may succeed.
	ErrUnavailable = errors.New("unavailable")
	// ErrMismatch: the bytes that arrived are not the file's known size or
	// SHA-256, or not the size the server itself announced.
	ErrMismatch = errors.New("checksum mismatch")
	// ErrCorrupt: the file is incomplete by its own format (a gzip stream
	// that ends early, a .b file that is not a whole number of records) or
	// empty, although the server said its length.
	ErrCorrupt = errors.New("incomplete file")
	// ErrLocked: another process is fetching the same file into the same
	// directory; once it is done, the file is there.
	ErrLocked = errors.New("being fetched by another process")
)

// Kinds of file a category may have. Not every release has every kind.
const (
	Meta          = "meta"           // product metadata
	Reviews       = "reviews"        // every review
	Core5         = "5core"          // the 5-core subset of the reviews
	ImageFeatures = "image_features" // the CNN features of the product images (.b)
)

// Release is one public release of the Amazon product data: its origin
// (scheme, host and path prefix of the publisher's copy), the paths of each
// kind of file below it, and its category names, spelled as in the file
// names.
type Release struct {
	Name   string
	Origin string
	// Kinds lists the kinds of file the release has, in listing order;
	// Default, the ones fetched when --what is not given (what the
	// project's jobs read).
	Kinds, Default []string
	Categories     []string
	// layout maps a kind to the file's path below Origin for a category.
	layout map[string]func(cat string) string
	// sizes are the byte sizes this project could find, by file name.
	sizes map[string]int64
}

// The 2014 release (McAuley, Targett, Shi and van den Hengel, SIGIR 2015;
// He and McAuley, WWW 2016), the paper's data. Its per-category files are
// linked from jmcauley.ucsd.edu/data/amazon/ (the "Per-category files"
// table) to snap.stanford.edu: categoryFiles/meta_C.json.gz,
// categoryFiles/reviews_C.json.gz, categoryFiles/reviews_C_5.json.gz and
// image_features/categoryFiles/image_features_C.b; the same URLs are
// fetched by the public download scripts of jinze1994/ATRank
// (utils/0_download_raw.sh), wubinzzu/Context2Bundle (utils/download.sh)
// and many more. The category names are the 24 of that table (spelled as
// in the file names, e.g. in the category list of the 5-core files used by
// public projects). Which categories have a .b file is not confirmed for
// every one (Clothing_Shoes_and_Jewelry, Electronics, Books, Baby,
// Home_and_Kitchen, Sports_and_Outdoors, Musical_Instruments and
// Office_Products are fetched by public code); a missing one answers 404,
// which Fetch reports as ErrNotFound naming the URL. No sizes or hashes
// were found published for this release.
var release2014 = &Release{
	Name:    "2014",
	Origin:  "https://snap.stanford.edu/data/amazon/productGraph/",
	Kinds:   []string{Meta, Reviews, Core5, ImageFeatures},
	Default: []string{Meta, Reviews, ImageFeatures},
	Categories: []string{
		"Amazon_Instant_Video", "Apps_for_Android", "Automotive", "Baby", "Beauty", "Books",
		"CDs_and_Vinyl", "Cell_Phones_and_Accessories", "Clothing_Shoes_and_Jewelry",
		"Digital_Music", "Electronics", "Grocery_and_Gourmet_Food", "Health_and_Personal_Care",
		"Home_and_Kitchen", "Kindle_Store", "Movies_and_TV", "Musical_Instruments",
		"Office_Products", "Patio_Lawn_and_Garden", "Pet_Supplies", "Sports_and_Outdoors",
		"Tools_and_Home_Improvement", "Toys_and_Games", "Video_Games",
	},
	layout: map[string]func(string) string{
		Meta:          func(c string) string { return "categoryFiles/meta_" + c + ".json.gz" },
		Reviews:       func(c string) string { return "categoryFiles/reviews_" + c + ".json.gz" },
		Core5:         func(c string) string { return "categoryFiles/reviews_" + c + "_5.json.gz" },
		ImageFeatures: func(c string) string { return "image_features/categoryFiles/image_features_" + c + ".b" },
	},
}

// The 2018 release (Ni, Li and McAuley, EMNLP 2019), described at
// nijianmo.github.io/amazon/. Its files first sat under
// deepyeti.ucsd.edu/jianmo/amazon/, then jmcauley.ucsd.edu/data/amazon_v2/;
// the McAuley lab now serves them at mcauleylab.ucsd.edu/public_datasets/
// data/amazon_v2/ (the URLs in public code such as RecAI's RecExplainer
// README and the BIGRec download scripts): categoryFiles/C.json.gz (every
// review), categoryFilesSmall/C_5.json.gz (5-core) and
// metaFiles2/meta_C.json.gz (metadata; metaFiles2 replaced metaFiles in
// 2020). The 29 category names are those of the release page, as listed
// in snap-stanford/stark's Amazon loader (with AMAZON_FASHION spelled as in
// its file names). Known sizes: four small files whose copies in public
// repositories carry gzip headers dated to the release (checksums/2018.sha256).
var release2018 = &Release{
	Name:    "2018",
	Origin:  "https://mcauleylab.ucsd.edu/public_datasets/data/amazon_v2/",
	Kinds:   []string{Meta, Reviews, Core5},
	Default: []string{Meta, Reviews},
	Categories: []string{
		"AMAZON_FASHION", "All_Beauty", "Appliances", "Arts_Crafts_and_Sewing", "Automotive",
		"Books", "CDs_and_Vinyl", "Cell_Phones_and_Accessories", "Clothing_Shoes_and_Jewelry",
		"Digital_Music", "Electronics", "Gift_Cards", "Grocery_and_Gourmet_Food",
		"Home_and_Kitchen", "Industrial_and_Scientific", "Kindle_Store", "Luxury_Beauty",
		"Magazine_Subscriptions", "Movies_and_TV", "Musical_Instruments", "Office_Products",
		"Patio_Lawn_and_Garden", "Pet_Supplies", "Prime_Pantry", "Software",
		"Sports_and_Outdoors", "Tools_and_Home_Improvement", "Toys_and_Games", "Video_Games",
	},
	layout: map[string]func(string) string{
		Meta:    func(c string) string { return "metaFiles2/meta_" + c + ".json.gz" },
		Reviews: func(c string) string { return "categoryFiles/" + c + ".json.gz" },
		Core5:   func(c string) string { return "categoryFilesSmall/" + c + "_5.json.gz" },
	},
	sizes: map[string]int64{
		// Copies committed to public repositories (ncloud50/hello2,
		// ncloud50/giftcard), gzip headers dated 2019-10-02 (reviews) and
		// 2020-08-07 (metaFiles2): see checksums/2018.sha256.
		"Gift_Cards_5.json.gz":                176952,
		"Magazine_Subscriptions_5.json.gz":    401655,
		"meta_Gift_Cards.json.gz":             380174,
		"meta_Magazine_Subscriptions.json.gz": 1241608,
	},
}

// The 2023 release, Amazon Reviews'23 (Hou et al., arXiv 2403.03952),
// described at amazon-reviews-2023.github.io. The McAuley lab serves the
// gzipped files at mcauleylab.ucsd.edu/public_datasets/data/amazon_2023/
// (also reachable as datarepo.eng.ucsd.edu/mcauley_group/data/amazon_2023/):
// raw/review_categories/C.jsonl.gz and raw/meta_categories/meta_C.jsonl.gz.
// Hugging Face (McAuley-Lab/Amazon-Reviews-2023) holds the same records
// uncompressed under raw/review_categories/C.jsonl, so it is not a drop-in
// --mirror for these names. The 34 category names are the release's
// all_categories.txt (33 categories and "Unknown"), as iterated by public
// download scripts. It has no 5-core raw files (its benchmark/ splits are
// another format) and no image features.
var release2023 = &Release{
	Name:    "2023",
	Origin:  "https://mcauleylab.ucsd.edu/public_datasets/data/amazon_2023/",
	Kinds:   []string{Meta, Reviews},
	Default: []string{Meta, Reviews},
	Categories: []string{
		"All_Beauty", "Amazon_Fashion", "Appliances", "Arts_Crafts_and_Sewing", "Automotive",
		"Baby_Products", "Beauty_and_Personal_Care", "Books", "CDs_and_Vinyl",
		"Cell_Phones_and_Accessories", "Clothing_Shoes_and_Jewelry", "Digital_Music",
		"Electronics", "Gift_Cards", "Grocery_and_Gourmet_Food", "Handmade_Products",
		"Health_and_Household", "Health_and_Personal_Care", "Home_and_Kitchen",
		"Industrial_and_Scientific", "Kindle_Store", "Magazine_Subscriptions", "Movies_and_TV",
		"Musical_Instruments", "Office_Products", "Patio_Lawn_and_Garden", "Pet_Supplies",
		"Software", "Sports_and_Outdoors", "Subscription_Boxes", "Tools_and_Home_Improvement",
		"Toys_and_Games", "Unknown", "Video_Games",
	},
	layout: map[string]func(string) string{
		Meta:    func(c string) string { return "raw/meta_categories/meta_" + c + ".jsonl.gz" },
		Reviews: func(c string) string { return "raw/review_categories/" + c + ".jsonl.gz" },
	},
	sizes: map[string]int64{
		// A public project's download manifest (module
		// batch_recsys_lab.ingest.download), the server's Content-Length
		// with Last-Modified Thu, 16 Jan 2025.
		"Electronics.jsonl.gz":      6474438619,
		"meta_Electronics.jsonl.gz": 1312900427,
		// continuejpg/AgentRec-X docs/EXPERIMENTS.md, with their SHA-256
		// (checksums/2023.sha256).
		"Sports_and_Outdoors.jsonl.gz":      2634864204,
		"meta_Sports_and_Outdoors.jsonl.gz": 1037418105,
	},
}

// Releases are the known releases, oldest first.
var Releases = []*Release{release2014, release2018, release2023}

// Lookup returns the release of that name.
func Lookup(name string) (*Release, error) {
	for _, r := range Releases {
		if r.Name == name {
			return r, nil
		}
	}
	names := make([]string, len(Releases))
	for i, r := range Releases {
		names[i] = r.Name
	}
	return nil, fmt.Errorf("%w: unknown release %q (want %s)", ErrUsage, name, strings.Join(names, ", "))
}

// File is one file to fetch.
type File struct {
	Release, Category, Kind string
	// Path is the file's path below the origin; URL, the origin (or the
	// mirror) joined with it; Name, the destination file name (the path's
	// last element, as the jobs name the files).
	Path, URL, Name string
	// Size is the expected size in bytes, -1 if unknown; SHA256 the
	// expected sum in hex, "" if unknown.
	Size   int64
	SHA256 string
}

// SafeURL is f.URL without the user name and password a mirror's URL may
// carry: what files and log lines hold. Only requests use URL itself.
func (f File) SafeURL() string { return stripUserinfo(f.URL) }

// stripUserinfo removes "user:password@" from a URL; a string that does not
// parse is returned up to its first '@' removed, so that no password shows.
func stripUserinfo(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if i := strings.LastIndexByte(s, '@'); i >= 0 {
			return "…" + s[i+1:]
		}
		return s
	}
	if u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}

// Request is what to fetch: categories and kinds of a release, from its
// origin or a mirror, with the checksums to verify against.
type Request struct {
	Categories []string
	// Kinds defaults to the release's Default.
	Kinds []string
	// Mirror, if set, replaces the origin: a URL (http, https or file)
	// whose path below holds the release's files at the same paths.
	Mirror string
	// Sums are the expected SHA-256 sums by file name; nil for the
	// release's shipped ones (Shipped) and its known sizes. Non-nil Sums
	// replace both: empty ones trust the server.
	Sums Sums
}

// didYouMean is "; did you mean X?" for the name of have that want is a
// slip of (baby for Baby), else "".
func didYouMean(want string, have []string) string {
	if near, ok := nearest.Slip(want, have); ok {
		return "; did you mean " + near + "?"
	}
	return ""
}

// Files returns every file req asks for, category by category, in the
// release's kind order. An unknown category or kind, or a bad mirror, is an
// ErrUsage naming what the release has.
func (r *Release) Files(req Request) ([]File, error) {
	if len(req.Categories) == 0 {
		return nil, fmt.Errorf("%w: no category given (release %s has %s)", ErrUsage, r.Name, strings.Join(r.Categories, ", "))
	}
	for _, c := range req.Categories {
		if !slices.Contains(r.Categories, c) {
			return nil, fmt.Errorf("%w: release %s has no category %q%s (it has %s)", ErrUsage, r.Name, c, didYouMean(c, r.Categories), strings.Join(r.Categories, ", "))
		}
	}
	kinds := req.Kinds
	if len(kinds) == 0 {
		kinds = r.Default
	}
	for _, k := range kinds {
		if !slices.Contains(r.Kinds, k) {
			return nil, fmt.Errorf("%w: release %s has no %q files%s (it has %s)", ErrUsage, r.Name, k, didYouMean(k, r.Kinds), strings.Join(r.Kinds, ", "))
		}
	}
	origin := r.Origin
	if req.Mirror != "" {
		u, err := url.Parse(req.Mirror)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") || (u.Scheme != "file" && u.Host == "") {
			return nil, fmt.Errorf("%w: mirror %q: want an http, https or file URL", ErrUsage, stripUserinfo(req.Mirror))
		}
		if u.RawQuery != "" || u.ForceQuery || strings.Contains(req.Mirror, "#") {
			// The file paths are appended to the mirror: after a '?' or
			// a '#' they would be part of the query or the fragment.
			return nil, fmt.Errorf("%w: mirror %q: a query (?...) or fragment (#...) would swallow the files' paths; give the folder's URL alone",
				ErrUsage, stripUserinfo(req.Mirror))
		}
		origin = strings.TrimSuffix(req.Mirror, "/") + "/"
	}
	sums := req.Sums
	if sums == nil {
		sums = Shipped(r.Name)
	}
	var out []File
	for _, c := range dedupe(req.Categories) {
		for _, k := range r.Kinds {
			if !slices.Contains(kinds, k) {
				continue
			}
			p := r.layout[k](c)
			name := path.Base(p)
			size, ok := r.sizes[name]
			if !ok || req.Sums != nil {
				// Sums given replace what the project ships, its sizes
				// too: /dev/null then trusts the server.
				size = -1
			}
			out = append(out, File{Release: r.Name, Category: c, Kind: k, Path: p, URL: origin + p,
				Name: name, Size: size, SHA256: sums[name]})
		}
	}
	return out, nil
}

func dedupe(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// Match is a release, category and kind a file name belongs to.
type Match struct {
	Release, Category, Kind string
}

// Identify returns the releases, categories and kinds whose layout names a
// file name, most likely first. A 2014 and a 2018 metadata file share the
// name meta_C.json.gz; where C is in both releases both are returned, 2014
// first (the paper's). Names of no release give nil.
func Identify(name string) []Match {
	var out []Match
	for _, r := range Releases {
		for _, k := range r.Kinds {
			for _, c := range r.Categories {
				if path.Base(r.layout[k](c)) == name {
					out = append(out, Match{r.Name, c, k})
				}
			}
		}
	}
	return out
}
