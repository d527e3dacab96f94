package pipeline

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestTextLogFlattensStats: in a terminal, nested stats print as dotted
// key=value pairs, never as Go maps or <nil>; JSON lines keep the nesting.
func TestTextLogFlattensStats(t *testing.T) {
	stats := normalizeStats(map[string]any{
		"lda_topics": struct {
			Evaluations   []float64
			PerWordBound  float64
			Iterations    int
			Converged     bool
			FirstMissing  *string
			Chunks, Items int64
		}{PerWordBound: -9.474512345678, Iterations: 21206, Converged: true, Chunks: 1},
		"split":  map[string]any{"pairs": []int{3181, 397, 398}, "capped": false},
		"rewire": map[string]any{"phases": []any{map[string]any{"accepted": 3}, map[string]any{"accepted": 0.5}}},
		"empty":  map[string]any{},
		"method": "rewire",
	})
	var text bytes.Buffer
	// The handler NewLogger gives a terminal, without the cut at
	// textLineMax (TestTextLogLineCut).
	slog.New(slog.NewTextHandler(&text, &slog.HandlerOptions{ReplaceAttr: flattenAttr})).Info("stage end",
		slog.String("stage", "train"), slog.Float64("seconds", 2.3651), slog.Any("stats", stats))
	line := text.String()
	line = line[strings.Index(line, " level="):]
	want := ` level=INFO msg="stage end" stage=train seconds=2.3651 stats.empty=none` +
		` stats.lda_topics.chunks=1 stats.lda_topics.converged=true stats.lda_topics.evaluations=none` +
		` stats.lda_topics.first_missing=none stats.lda_topics.items=0 stats.lda_topics.iterations=21206` +
		` stats.lda_topics.per_word_bound=-9.47451 stats.method=rewire` +
		` stats.rewire.phases.0.accepted=3 stats.rewire.phases.1.accepted=0.5` +
		` stats.split.capped=false stats.split.pairs=3181,397,398` + "\n"
	if line != want {
		t.Errorf("text log\n got %q\nwant %q", line, want)
	}
	for _, bad := range []string{"map[", "<nil>", "{"} {
		if strings.Contains(line, bad) {
			t.Errorf("text log contains %q: %s", bad, line)
		}
	}
	var js bytes.Buffer
	NewLogger(&js, false).Info("stage end", slog.Any("stats", stats))
	if !strings.Contains(js.String(), `"stats":{"empty":{},"lda_topics":{"chunks":1,"converged":true,"evaluations":null,`) {
		t.Errorf("JSON log changed: %s", js.String())
	}
}

// TestBarDrawsBar: the bar has its fixed width whatever the terminal
// reports (here a writer that is no terminal at all), and Describe's text
// replaces the label.
func TestBarDrawsBar(t *testing.T) {
	defer func(d time.Duration) { progressDelay = d }(progressDelay)
	progressDelay = 0
	var buf strings.Builder
	tr := BarTracker(&buf)("train lmt λ=0.0001", 100)
	Describe(tr, "train lmt λ=0.0001 valid_error=0.2839")
	tr.Add(50)
	out := buf.String()
	if !strings.Contains(out, "train lmt λ=0.0001 valid_error=0.2839") || !strings.Contains(out, "(50/100") {
		t.Errorf("bar %q lacks its description or count", out)
	}
	if full := strings.Repeat("█", barWidth/2); !strings.Contains(out, "|"+full+strings.Repeat(" ", barWidth/2)+"|") {
		t.Errorf("bar %q: want a %d-column bar half full", out, barWidth)
	}
	tr.Done()
	Describe(nopTracker{}, "ignored") // no bar: nothing to do
}

// TestBarClock: a bar drawn two seconds into its step shows the step's
// clock, not 0s (issue 22: it read [0s:0s] at 45 % of a fit): elapsed since
// the step started and the time left at that pace.
func TestBarClock(t *testing.T) {
	var buf strings.Builder
	start := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)
	now := start
	tr := &barTracker{w: &buf, label: "train lmt λ=0.0001", total: 100, start: start, now: func() time.Time { return now }}
	now = start.Add(progressDelay / 2)
	tr.Add(10) // before the delay: no bar
	if buf.Len() != 0 {
		t.Fatalf("bar drawn before the delay: %q", buf.String())
	}
	now = start.Add(9 * time.Second)
	tr.Add(35) // 45 of 100 in 9 s: 11 s left at that pace
	if out := buf.String(); !strings.Contains(out, "train lmt λ=0.0001 [9s:11s]") || !strings.Contains(out, "(45/100)") {
		t.Errorf("bar at 45 %% after 9 s: %q", out)
	}
	if got := tr.description(); got != "train lmt λ=0.0001 [9s:11s]" {
		t.Errorf("description %q", got)
	}
	tr.Done()
}

// TestTextLogLineCut: on a terminal a stage end with long stats stays
// within textLineMax characters, its rows and seconds first; JSON keeps all.
func TestTextLogLineCut(t *testing.T) {
	stats := map[string]any{}
	for _, m := range []string{"wnn", "lda", "lmt", "monomer"} {
		stats[m] = map[string]any{"iterations": 123, "lambda": 0.0001, "sparse_density": 0.1234, "valid_error": 0.2839, "evaluations": 456}
	}
	var text, js bytes.Buffer
	for _, l := range []*slog.Logger{NewLogger(&text, true), NewLogger(&js, false)} {
		l.Info("stage end", slog.String("experiment", "men-also_bought-image"), slog.String("stage", "train.monomer"),
			slog.Int64("rows", 4242), slog.Float64("seconds", 6.739), slog.Any("stats", normalizeStats(stats)))
		l.Info("short", slog.String("stage", "split"))
	}
	lines := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %q", len(lines), text.String())
	}
	if n := utf8.RuneCountInString(lines[0]); n != textLineMax || !strings.HasSuffix(lines[0], cutMark) || !strings.Contains(lines[0], "rows=4242 seconds=6.739 stats.") {
		t.Errorf("stage end on a terminal, %d characters: %s", n, lines[0])
	}
	if !strings.HasSuffix(lines[1], `msg=short stage=split`) {
		t.Errorf("short line: %s", lines[1])
	}
	if !strings.Contains(js.String(), `"valid_error":0.2839}}}`) {
		t.Errorf("JSON cut: %s", js.String())
	}
}

// TestTextLogLineAtMax: a line of exactly textLineMax characters (runes,
// not bytes) is written whole; one more and it is cut.
func TestTextLogLineAtMax(t *testing.T) {
	for _, n := range []int{textLineMax, textLineMax + 1} {
		var buf bytes.Buffer
		line := strings.Repeat("é", n) + "\n"
		if _, err := (&lineCutter{w: &buf}).Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSuffix(buf.String(), "\n")
		if cut := strings.HasSuffix(got, cutMark); cut != (n > textLineMax) || utf8.RuneCountInString(got) != textLineMax {
			t.Errorf("%d characters: written as %d, cut %v", n, utf8.RuneCountInString(got), cut)
		}
	}
}
