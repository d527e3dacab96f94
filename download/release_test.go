package download

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
)

func TestFiles(t *testing.T) {
	tests := []struct {
		release string
		req     Request
		want    []string // path below the origin, each
	}{
		{"2014", Request{Categories: []string{"Clothing_Shoes_and_Jewelry"}}, []string{
			"categoryFiles/meta_Clothing_Shoes_and_Jewelry.json.gz",
			"categoryFiles/reviews_Clothing_Shoes_and_Jewelry.json.gz",
			"image_features/categoryFiles/image_features_Clothing_Shoes_and_Jewelry.b",
		}},
		{"2014", Request{Categories: []string{"Electronics", "Baby", "Electronics"}, Kinds: []string{Core5, Meta}}, []string{
			"categoryFiles/meta_Electronics.json.gz",
			"categoryFiles/reviews_Electronics_5.json.gz",
			"categoryFiles/meta_Baby.json.gz",
			"categoryFiles/reviews_Baby_5.json.gz",
		}},
		{"2018", Request{Categories: []string{"Magazine_Subscriptions"}, Kinds: []string{Meta, Reviews, Core5}}, []string{
			"metaFiles2/meta_Magazine_Subscriptions.json.gz",
			"categoryFiles/Magazine_Subscriptions.json.gz",
			"categoryFilesSmall/Magazine_Subscriptions_5.json.gz",
		}},
		{"2023", Request{Categories: []string{"Electronics"}}, []string{
			"raw/meta_categories/meta_Electronics.jsonl.gz",
			"raw/review_categories/Electronics.jsonl.gz",
		}},
	}
	for _, tc := range tests {
		r, err := Lookup(tc.release)
		if err != nil {
			t.Fatal(err)
		}
		for _, mirror := range []string{"", "http://mirror.example/amazon/", "file:///data/amazon"} {
			req := tc.req
			req.Mirror = mirror
			fs, err := r.Files(req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fs {
				got = append(got, f.Path)
				base := r.Origin
				if mirror != "" {
					base = strings.TrimSuffix(mirror, "/") + "/"
				}
				if f.URL != base+f.Path || f.Name != path.Base(f.Path) {
					t.Errorf("%s %s: URL %s, name %s", tc.release, f.Path, f.URL, f.Name)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s %+v: paths\n%q\nwant\n%q", tc.release, req, got, tc.want)
			}
		}
	}
}

func TestFilesUsage(t *testing.T) {
	tests := []struct {
		release string
		req     Request
		want    string // in the message
	}{
		{"2014", Request{Categories: []string{"Clothing"}}, "Clothing_Shoes_and_Jewelry"},
		{"2014", Request{}, "Amazon_Instant_Video"},
		{"2023", Request{Categories: []string{"Electronics"}, Kinds: []string{ImageFeatures}}, "meta, reviews"},
		{"2018", Request{Categories: []string{"Electronics"}, Mirror: "ftp://x/y"}, "mirror"},
		{"2018", Request{Categories: []string{"Electronics"}, Mirror: "https:///y"}, "mirror"},
		// A slip is named (L15: baby got the list alone).
		{"2014", Request{Categories: []string{"baby"}}, `no category "baby"; did you mean Baby? (it has `},
		{"2014", Request{Categories: []string{"Baby"}, Kinds: []string{"revews"}}, `no "revews" files; did you mean reviews? (it has `},
	}
	for _, tc := range tests {
		r, _ := Lookup(tc.release)
		_, err := r.Files(tc.req)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: %v, want ErrUsage with %q", tc.release, tc.req, err, tc.want)
		}
	}
	if _, err := Lookup("2016"); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "2014, 2018, 2023") {
		t.Errorf("Lookup(2016): %v", err)
	}
}

func TestIdentify(t *testing.T) {
	tests := []struct {
		name string
		want []Match
	}{
		{"image_features_Clothing_Shoes_and_Jewelry.b", []Match{{"2014", "Clothing_Shoes_and_Jewelry", ImageFeatures}}},
		{"reviews_Electronics.json.gz", []Match{{"2014", "Electronics", Reviews}}},
		{"reviews_Baby_5.json.gz", []Match{{"2014", "Baby", Core5}}},
		{"meta_Electronics.json.gz", []Match{{"2014", "Electronics", Meta}, {"2018", "Electronics", Meta}}},
		{"meta_Gift_Cards.json.gz", []Match{{"2018", "Gift_Cards", Meta}}},
		{"Magazine_Subscriptions_5.json.gz", []Match{{"2018", "Magazine_Subscriptions", Core5}}},
		{"Electronics.jsonl.gz", []Match{{"2023", "Electronics", Reviews}}},
		{"meta_Electronics.jsonl.gz", []Match{{"2023", "Electronics", Meta}}},
		{"meta_Demo.json.gz", nil},
		{"Electronics.jsonl", nil},
	}
	for _, tc := range tests {
		if got := Identify(tc.name); !slices.Equal(got, tc.want) {
			t.Errorf("Identify(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Every shipped sum and size names a file of its release.
func TestShippedSums(t *testing.T) {
	for _, r := range Releases {
		names := map[string]bool{}
		for n := range Shipped(r.Name) {
			names[n] = true
		}
		for n := range r.sizes {
			names[n] = true
		}
		for n := range names {
			found := false
			for _, m := range Identify(n) {
				found = found || m.Release == r.Name
			}
			if !found {
				t.Errorf("release %s ships a sum or size for %q, not one of its files", r.Name, n)
			}
		}
	}
	// A shipped sum and size reach the File.
	fs, err := release2023.Files(Request{Categories: []string{"Sports_and_Outdoors"}})
	if err != nil {
		t.Fatal(err)
	}
	if fs[1].Name != "Sports_and_Outdoors.jsonl.gz" || fs[1].Size != 2634864204 || !strings.HasPrefix(fs[1].SHA256, "8f6ddb51") {
		t.Errorf("%+v", fs[1])
	}
	if fs, _ := release2014.Files(Request{Categories: []string{"Baby"}}); fs[0].Size != -1 || fs[0].SHA256 != "" {
		t.Errorf("unknown size and sum: %+v", fs[0])
	}
}

func TestParseSums(t *testing.T) {
	h := strings.Repeat("ab", 32)
	s, err := ParseSums(strings.NewReader("# comment\n\n"+h+"  a.json.gz\n"+strings.ToUpper(h)+" *dir/b.b\r\n"), "f")
	if err != nil || s["a.json.gz"] != h || s["b.b"] != h || len(s) != 2 {
		t.Fatalf("%v %v", s, err)
	}
	for _, bad := range []string{"abc  x", h + "  ", h, strings.Repeat("zz", 32) + "  x"} {
		if _, err := ParseSums(strings.NewReader("# c\n"+bad+"\n"), "sums.txt"); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "sums.txt line 2") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
