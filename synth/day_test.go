package synth_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"monomer/synth"
)

func dayWorld(t *testing.T, day int) *synth.World {
	t.Helper()
	cfg, err := synth.Scale("tiny")
	if err != nil {
		t.Fatal(err)
	}
	w, err := synth.NewWorld(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Day(day); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestDayTwo: day 2 differs from day 1 by exactly the stated shares of
// new items, removed items and new pairs between the items both days
// have; every other item keeps its ASIN, subcategory, latent and
// features, and every edge of day 1 between kept items is still there.
func TestDayTwo(t *testing.T) {
	d1, d2 := dayWorld(t, 1), dayWorld(t, 2)
	asins := func(w *synth.World) map[string]int {
		m := map[string]int{}
		for i, it := range w.Items {
			if !w.Gone(i) {
				m[it.ASIN] = i
			}
		}
		return m
	}
	a1, a2 := asins(d1), asins(d2)
	regular := 0
	for _, it := range d1.Items {
		if it.Kind == synth.Regular {
			regular++
		}
	}
	var added, removed int
	for a := range a2 {
		if _, ok := a1[a]; !ok {
			added++
		}
	}
	for a, i := range a1 {
		if _, ok := a2[a]; !ok {
			removed++
			if d1.Items[i].Kind != synth.Regular {
				t.Errorf("removed %s is not a Regular item", a)
			}
		}
	}
	if want := int(math.Round(synth.DayNewItems * float64(regular))); added != want || want == 0 {
		t.Errorf("%d new items, want %d (%g of %d)", added, want, synth.DayNewItems, regular)
	}
	if want := int(math.Round(synth.DayRemovedItems * float64(regular))); removed != want || want == 0 {
		t.Errorf("%d removed items, want %d", removed, want)
	}
	f1, f2 := make([]float32, d1.Config.FeatureDim), make([]float32, d1.Config.FeatureDim)
	for a, i := range a1 {
		j, ok := a2[a]
		if !ok {
			continue
		}
		if i != j || d1.Items[i] != d2.Items[j] || !slices.Equal(d1.Latent(i), d2.Latent(j)) {
			t.Fatalf("%s changed between the days: %+v, %+v", a, d1.Items[i], d2.Items[j])
		}
		if i%97 == 0 {
			d1.Feature(i, f1)
			d2.Feature(j, f2)
			if !slices.Equal(f1, f2) {
				t.Fatalf("%s: features differ", a)
			}
		}
	}
	type pair struct{ x, y string }
	for _, g := range []string{synth.AlsoBought, synth.AlsoViewed} {
		set := func(w *synth.World) map[pair]bool {
			m := map[pair]bool{}
			for _, e := range w.Edges(g) {
				m[pair{w.Items[e.Src].ASIN, w.Items[e.Dst].ASIN}] = true
			}
			return m
		}
		e1, e2 := set(d1), set(d2)
		kept, newOld, newItems := 0, 0, 0
		for p := range e1 {
			_, okx := a2[p.x]
			_, oky := a2[p.y]
			if okx && oky {
				kept++
				if !e2[p] {
					t.Errorf("%s: %v lost though both items stay", g, p)
				}
			} else if e2[p] {
				t.Errorf("%s: %v kept with a removed end", g, p)
			}
		}
		for p := range e2 {
			if e1[p] {
				continue
			}
			_, okx := a1[p.x]
			_, oky := a1[p.y]
			if okx && oky {
				newOld++
			} else {
				newItems++
			}
		}
		if want := int(math.Round(synth.DayNewPairs * float64(kept))); newOld != want || want == 0 {
			t.Errorf("%s: %d new pairs between day-1 items, want %d (%g of %d)", g, newOld, want, synth.DayNewPairs, kept)
		}
		if newItems == 0 {
			t.Errorf("%s: the new items have no edges", g)
		}
		t.Logf("%s: %d edges kept, %d new between day-1 items, %d of new items", g, kept, newOld, newItems)
	}
	if err := d2.Day(2); err == nil {
		t.Error("a day-2 world turned into day 2 again")
	}
	if err := dayWorld(t, 1).Day(3); err == nil {
		t.Error("day 3 generated")
	}
}

// TestDayTwoFiles writes day 2 in every layout gen writes at GOMAXPROCS 1
// and 2: the same bytes, and as many items as day 1 minus the removed
// plus the new.
func TestDayTwoFiles(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	write := func(procs int) (string, map[string]synth.WriteStats) {
		runtime.GOMAXPROCS(procs)
		dir := t.TempDir()
		for _, sub := range []string{"2014", "2023", "cat"} {
			if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		w := dayWorld(t, 2)
		st := map[string]synth.WriteStats{}
		var err error
		if st["2014"], err = synth.Write(t.Context(), filepath.Join(dir, "2014"), "Day", w, synth.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if st["2023"], err = synth.Write2023(t.Context(), filepath.Join(dir, "2023"), "Day", w, synth.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if st["catalogue"], err = synth.WriteCatalogue(t.Context(), filepath.Join(dir, "cat"), "Day", w, false, synth.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		return dir, st
	}
	a, sa := write(1)
	b, _ := write(2)
	w := dayWorld(t, 2)
	kept := 0
	for i := range w.Items {
		if !w.Gone(i) {
			kept++
		}
	}
	for layout, st := range sa {
		if st.MetaLines != int64(kept) {
			t.Errorf("%s: %d items written, want %d", layout, st.MetaLines, kept)
		}
	}
	files := 0
	err := filepath.Walk(a, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between GOMAXPROCS 1 and 2 (%v)", rel, err)
		}
		files++
		return nil
	})
	if err != nil || files < 8 {
		t.Errorf("%d files compared (%v)", files, err)
	}
}
