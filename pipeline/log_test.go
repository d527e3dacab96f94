package pipeline

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
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
	NewLogger(&text, true).Info("stage end", slog.String("stage", "train"), slog.Float64("seconds", 2.3651), slog.Any("stats", stats))
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
