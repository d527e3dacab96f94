package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsUpToDate: each committed page is what the generator prints from
// the code now, as cmd/go's TestDocsUpToDate holds alldocs.go to `go help
// documentation`. A setting, column or doc comment changed without
// regenerating fails here.
func TestDocsUpToDate(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		want, err := p.gen(root)
		if err != nil {
			t.Fatalf("%s: %v", p.path, err)
		}
		have, err := os.ReadFile(filepath.Join(root, p.path))
		if err != nil {
			t.Fatalf("%v; run %s", err, regenerate)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s differs from what the code prints (first difference at line %d); run %s", p.path, firstDiff(have, want), regenerate)
		}
	}
}

// firstDiff is the 1-based line where a and b first differ.
func firstDiff(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// TestPagesCover: the pages name every setting and every table, each with
// its declared facts: a renderer that dropped one would still be up to
// date with itself.
func TestPagesCover(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	settings, err := settingsPage(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"#### reject_ratio\n\n*number; default `0.001`; must be at most 1; zero is a value*",
		"#### train_cap\n\n*integer; default `2,000,000`; must be at least 14 (a smaller cap leaves the validation or test split without a positive and a negative pair); at most 2,147,483,647 after resolution*",
		"#### negatives\n\n*string; default `rewire`; one of `rewire`, `uniform`, `auto`*",
		"#### lambdas\n\n*list of numbers; default `[0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2]`; must be in [0, 1e+06]; at most this many: 1000 after resolution; no value listed twice*",
		"#### co_review_window\n\n*integer; default `30`; must be non-negative; at most 1,000,000 after resolution; zero is a value*",
		"#### lda_passes\n\n*integer; no default: see what 0 means; must be positive*",
		"`vocab_size` is the vocabulary size",
		"| `depth` | `depth` is how many levels",
	} {
		if !strings.Contains(string(settings), want) {
			t.Errorf("settings page lacks %q", want)
		}
	}
	tables, err := tablesPage(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## items\n\nWritten to ingest/items.parquet.",
		"| subcategory | string | dictionary-encoded |",
		"| weights | list<float> |  |",
		"| values | list<double> |  |",
		"| label | int8 |  |",
		"| gate_routes | double | *added later* |",
		"## job_metrics\n\nWritten to metrics.parquet at the run directory's top",
	} {
		if !strings.Contains(string(tables), want) {
			t.Errorf("tables page lacks %q", want)
		}
	}
}
