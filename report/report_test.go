package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testPage builds a page with one full experiment and one where Monomer
// and LMT failed, there are bag-of-words features and no trace: the second
// must render with those sections absent.
func testPage() *Page {
	rng := rand.New(rand.NewPCG(4, 4))
	subs := []string{"Pants", "Shirts", "Shoes", "Watches"}
	full := &Experiment{Name: "men-image", Dataset: "Men", Graph: "also_bought", Features: "image",
		Items: 300, Subcategories: 4, Edges: 900, PaperItems: 306215, PaperSubcats: 56, PaperEd: 1075547, K: 10, SubNames: subs}
	claims := func(s float64) *Claims {
		return &Claims{Same: s, Distinct: 3.5, Coverage: 0.6, Gini: 0.4, CoverageCross: 0.4321, GiniCross: 0.5678,
			HitRate: 0.2, Recall: 0.15, Queries: 300, TestQueries: 80}
	}
	old := claims(0.5) // from a run before the cross-subcategory lists
	old.CoverageCross, old.GiniCross = math.NaN(), math.NaN()
	full.Models = []ModelResult{
		{Model: "wnn", Title: "WNN", TestError: 0.35, PaperError: 0.3495, AUC: 0.7, Lambda: 0, Valid: 0.34, Claims: old},
		{Model: "ct", Title: "CT", TestError: 0.45, PaperError: 0.4771, AUC: 0.55, Lambda: math.NaN(), Valid: 0.46},
		{Model: "lmt", Title: "LMT", TestError: 0.2, PaperError: 0.092, AUC: 0.85, Lambda: 1e-4, Valid: 0.21, Claims: claims(0.6)},
		{Model: "monomer", Title: "Monomer", TestError: 0.15, PaperError: 0.0648, AUC: 0.9, Lambda: 1e-4, Valid: 0.16, Claims: claims(0.3)},
	}
	for _, m := range []string{"WNN", "LMT", "Monomer"} {
		for i, l := range []float64{0, 1e-4, 1e-2} {
			full.Fits = append(full.Fits, FitPoint{Model: m, Lambda: l, ValidError: 0.3 - 0.02*float64(i) + 0.01*float64(len(m)), Selected: i == 1})
			for it := 1; it <= 30; it++ {
				v := math.NaN()
				if it%10 == 0 {
					v = 0.4 - 0.005*float64(it)
				}
				full.Trace = append(full.Trace, TracePoint{Model: m, Lambda: l, Iteration: it, Objective: -0.7 + 0.01*float64(it) - 0.1*float64(i), ValidError: v})
			}
		}
	}
	n, dim := 120, 5
	for s := range 3 {
		sp := Space{Title: fmt.Sprintf("space %d", s), Dim: dim}
		for i := range n {
			sp.Sub = append(sp.Sub, i%4)
			for d := range dim {
				c := 0.0
				if d == i%4 {
					c = 4
				}
				sp.Vectors = append(sp.Vectors, c+rng.NormFloat64())
			}
		}
		full.Spaces = append(full.Spaces, sp)
	}
	full.Warnings = []string{"e1: 700 training pairs <below>"}
	full.Gate = &Gate{Spaces: 3, UsedSpaces: 1.37, Routes: 1.04, Subcats: subs, Items: []int{30, 30, 30, 30},
		Mean: [][]float64{{0.2, 0.3, 0.5}, {0.6, 0.2, 0.2}, {0.1, 0.1, 0.8}, {0.3, 0.4, 0.3}}}
	it := func(t, s string) Item { return Item{ASIN: "B0" + t, Title: t, Subcategory: s} }
	full.DimTops = &DimTops{Space: "Monomer space 1", Dims: [][]Item{{it("Slim Pant", "Pants"), it("Knit Pant", "Pants")}, {it("Watch <b>", "Watches")}}}
	full.Queries = []QueryLists{{Query: it("Dress Shirt", "Shirts"), Lists: []RecList{
		{Model: "LMT", Distinct: 1, Items: []RecItem{{Item: it("Oxford Shirt", "Shirts"), Prob: 0.9, Same: true}}},
		{Model: "Monomer", Distinct: 2, Items: []RecItem{{Item: it("Chino", "Pants"), Prob: 0.95, Space: 2}, {Item: it("Tie Shirt", "Shirts"), Prob: 0.9, Space: 1, Same: true}}},
	}}}
	degraded := &Experiment{Name: "women-bow", Dataset: "—", Graph: "also_viewed", Features: "bow", Items: 200, Subcategories: 3, Edges: 500, K: 10,
		Models: []ModelResult{{Model: "wnn", Title: "WNN", TestError: 0.4, PaperError: math.NaN(), AUC: 0.6, Lambda: 0, Valid: 0.41},
			{Model: "ct", Title: "CT", TestError: 0.5, PaperError: math.NaN(), AUC: 0.5, Lambda: math.NaN(), Valid: 0.5}},
		Fits: []FitPoint{{Model: "WNN", Lambda: 0, ValidError: 0.41, Selected: true}}}
	return &Page{Job: "report-test", Experiments: []*Experiment{full, degraded}}
}

func writeTestPage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w, err := Write(context.Background(), dir, testPage(), Options{Seed: 1, TSNE: TSNEOptions{Iterations: 250}})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Files) < 10 {
		t.Fatalf("only %v written", w.Files)
	}
	return dir
}

var refRE = regexp.MustCompile(`(?:src|href)="([^"#][^"]*)"`)

// TestReportFiles: the page references only files that exist, every PNG
// decodes and is not one flat colour, the tables are there, and the
// degraded experiment has no sections it cannot fill.
func TestReportFiles(t *testing.T) {
	dir := writeTestPage(t)
	html, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	refs := refRE.FindAllSubmatch(html, -1)
	if len(refs) < 10 {
		t.Fatalf("%d references in the page", len(refs))
	}
	for _, m := range refs {
		ref := string(m[1])
		if strings.Contains(ref, "://") || strings.HasPrefix(ref, "/") || strings.Contains(ref, "..") {
			t.Errorf("reference %q leaves the report directory", ref)
			continue
		}
		checkPNG(t, filepath.Join(dir, ref))
	}
	// Every PNG written is shown.
	pngs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	if len(pngs) != len(refs) {
		t.Errorf("%d PNGs written, %d referenced", len(pngs), len(refs))
	}
	page := string(html)
	for _, want := range []string{`class="paper"`, `class="datasets"`, `class="models"`, `class="claims"`, `class="dims"`, `class="reclist"`,
		"9.20%", "(306215)", "Coverage, cross-subcategory lists", "43.21%", "0.568", "Watch &lt;b&gt;", "Training curves", "<h3>Monomer's gate", "<b>1.37</b> of its 3 spaces", "<b>1.04</b>",
		`<p class="warn">e1: 700 training pairs &lt;below&gt;</p>`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// A model measured before the cross-subcategory lists shows dashes there.
	claims := page[strings.Index(page, `class="claims"`):]
	if row := claims[strings.Index(claims, "<td>WNN</td>"):]; !strings.Contains(row[:strings.Index(row, "</tr>")], "—") {
		t.Errorf("claims row without cross-subcategory metrics: %s", row[:strings.Index(row, "</tr>")])
	}
	// The degraded experiment: after its heading, no maps, gate, curves,
	// claims or lists.
	deg := page[strings.Index(page, `id="women-bow"`):]
	for _, absent := range []string{"e1-map", "e1-gate", "e1-trace", `class="warn"`, `class="claims"`, `class="reclist"`, "broken"} {
		if strings.Contains(deg, absent) {
			t.Errorf("degraded experiment shows %q", absent)
		}
	}
	if !strings.Contains(deg, "e1-lambda.png") {
		t.Error("degraded experiment lacks its λ plot")
	}
}

// checkPNG decodes a PNG and fails if every pixel has the same colour.
func checkPNG(t *testing.T, path string) image.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("referenced file: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	bd := img.Bounds()
	first := img.At(bd.Min.X, bd.Min.Y)
	r0, g0, b0, a0 := first.RGBA()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			if r, g, b, a := img.At(x, y).RGBA(); r != r0 || g != g0 || b != b0 || a != a0 {
				return img
			}
		}
	}
	t.Errorf("%s: one flat colour", path)
	return img
}

// TestProb: probabilities near 0 or 1 keep the digits that rank a list
// (issue 22: LMT's lists read 1.000 throughout).
func TestProb(t *testing.T) {
	for _, c := range []struct {
		p    float64
		want string
	}{
		{0.5, "0.500"}, {0.9518, "0.952"}, {0.0012, "0.001"},
		{1 - 9.5e-06, "1 − 9.5e-06"}, {1 - 3.2e-05, "1 − 3.2e-05"}, {1.3e-05, "1.3e-05"}, {8.2e-09, "8.2e-09"},
		{1, "1"}, {0, "0"}, {math.NaN(), "—"},
	} {
		if got := Prob(c.p); got != c.want {
			t.Errorf("Prob(%g) = %q, want %q", c.p, got, c.want)
		}
	}
}

// TestPlotRoom: the gate's axis stops at 1 (a probability) and its legend
// has empty slots right of the stacks; a training curve's legend has a
// strip right of the last iteration, so no curve runs under it (issue 22).
func TestPlotRoom(t *testing.T) {
	page := testPage()
	g := page.Experiments[0].Gate
	p, err := gateFigure(g)
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min != 0 || p.Y.Max != 1 {
		t.Errorf("gate y axis %g..%g, want 0..1", p.Y.Min, p.Y.Max)
	}
	if last := float64(len(g.Subcats) - 1); p.X.Max < last+1.5 {
		t.Errorf("gate x axis ends at %g: no room for the legend right of stack %g", p.X.Max, last)
	}
	// testPage's objective runs from iteration 1 to 30, its validation
	// error from 10 to 30.
	for valid, first := range map[bool]float64{false: 1, true: 10} {
		p, err := traceFigure("WNN", page.Experiments[0].Trace, valid)
		if err != nil {
			t.Fatal(err)
		}
		if p.X.Min != first || p.X.Max < 30+legendRoom*(30-first) {
			t.Errorf("trace (valid %v) x axis %g..%g: no strip for the legend after iteration 30", valid, p.X.Min, p.X.Max)
		}
	}
}

// TestWritePageMarksRefused: WritePage assembles sections drawn elsewhere
// (by their files' names) and marks an experiment whose publish gate
// refused the run, with every check against its threshold; an experiment
// without a gate shows none, and tables.md lists the refusal.
func TestWritePageMarksRefused(t *testing.T) {
	dir := t.TempDir()
	refused := &Experiment{Name: "a", Features: "image", Publish: &PublishGate{Model: "monomer", Decision: "refuse", Promotable: true,
		Reason: "churn 0.7 against the threshold 0.6", Previous: "n1", Checks: []GateCheck{{"coverage", 0.9, 0.1, true}, {"churn", 0.7, 0.6, false}}}}
	plain := &Experiment{Name: "b", Features: "bow"}
	page := &Page{Job: "j", Experiments: []*Experiment{refused, plain}}
	sections := []*Section{{LambdaPNG: "lambda.png"}, {}}
	renamed := []*Section{sections[0].Renamed(func(f string) string { return "e0-" + f }), sections[1]}
	if err := WritePage(dir, page, renamed[:1]); err == nil {
		t.Error("one section for two experiments: no error")
	}
	if err := WritePage(dir, page, renamed); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(html)
	for _, want := range []string{`<a href="#a">a (not promoted)</a><a href="#b">b</a>`, `<img src="e0-lambda.png"`,
		"<b>Not promoted</b>: the gate refused this run's monomer lists (churn 0.7 against the threshold 0.6)",
		"<code>published/a</code> stays at run n1", "<tr><td>churn</td><td class=\"n\">0.7</td><td class=\"n\">0.6</td><td><b>no</b></td></tr>",
		"<tr><td>coverage</td><td class=\"n\">0.9</td><td class=\"n\">0.1</td><td>yes</td></tr>"} {
		if !strings.Contains(s, want) {
			t.Errorf("index.html has no %q", want)
		}
	}
	if n := strings.Count(s, "<h3>Publish gate</h3>"); n != 1 {
		t.Errorf("%d publish gate boxes, want 1 (b has no gate)", n)
	}
	if md := Markdown(page); !strings.Contains(md, "- a: not promoted: the publish gate refused its monomer lists (churn 0.7 against the threshold 0.6); see a/publish/gate.json.\n") ||
		strings.Contains(md, "- b: not promoted") {
		t.Errorf("tables.md:\n%s", md)
	}
}
