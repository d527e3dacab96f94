package pipeline

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// IsTerminal reports whether f is a character device (a terminal), the test
// that picks text logs and progress bars over JSON lines.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// NewLogger returns the run's logger: readable text on a terminal, JSON
// lines otherwise (cron, Airflow, a file).
func NewLogger(w io.Writer, terminal bool) *slog.Logger {
	if terminal {
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: flattenAttr}))
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// flattenAttr makes nested values (a stage's stats: maps of maps, lists)
// readable in text logs: a map becomes a group, which the text handler
// prints as dotted keys (stats.lda.iterations=19), a list of plain values
// becomes "a,b,c", null becomes "none", and a float prints with six
// significant digits. The JSON handler keeps the values as they are.
//
// The job and run ID, which Run adds to every line for the JSON logs a
// scheduler collects, are left out: a terminal shows one run.
func flattenAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && (a.Key == "job" || a.Key == "run_id") {
		return slog.Attr{}
	}
	if a.Value.Kind() != slog.KindAny && a.Value.Kind() != slog.KindFloat64 {
		return a
	}
	return slog.Attr{Key: a.Key, Value: flatValue(a.Value.Any())}
}

func flatValue(x any) slog.Value {
	switch v := x.(type) {
	case nil:
		return slog.StringValue("none")
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		attrs := make([]slog.Attr, 0, len(keys))
		for _, k := range keys {
			attrs = append(attrs, slog.Attr{Key: k, Value: flatValue(v[k])})
		}
		if len(attrs) == 0 {
			return slog.StringValue("none")
		}
		return slog.GroupValue(attrs...)
	case []any:
		parts := make([]string, len(v))
		nested := false
		for i, e := range v {
			fv := flatValue(e)
			if fv.Kind() == slog.KindGroup {
				nested = true
				break
			}
			parts[i] = fv.String()
		}
		if !nested {
			if len(parts) == 0 {
				return slog.StringValue("none")
			}
			return slog.StringValue(strings.Join(parts, ","))
		}
		attrs := make([]slog.Attr, len(v))
		for i, e := range v {
			attrs[i] = slog.Attr{Key: strconv.Itoa(i), Value: flatValue(e)}
		}
		return slog.GroupValue(attrs...)
	case json.Number:
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return slog.StringValue(string(v))
		}
		if f, err := v.Float64(); err == nil {
			return flatValue(f)
		}
		return slog.StringValue(string(v))
	case float64:
		return slog.StringValue(strconv.FormatFloat(v, 'g', 6, 64))
	case float32:
		return flatValue(float64(v))
	case error:
		return slog.StringValue(v.Error())
	case fmt.Stringer:
		return slog.StringValue(v.String())
	case string, bool, int, int32, int64, uint64:
		return slog.AnyValue(v)
	}
	// Anything else (a stats struct): through its JSON form, like the
	// manifest.
	return flatValue(statsOf(x))
}

// progressDelay is how long a step must take before it gets a bar, so short
// steps do not flicker.
var progressDelay = 2 * time.Second

// BarTracker returns an Env.Tracker drawing progress bars on w (a
// terminal). A bar appears only once its step has run for two seconds.
func BarTracker(w io.Writer) func(label string, total int64) Tracker {
	return func(label string, total int64) Tracker {
		return &barTracker{w: w, label: label, total: total, start: time.Now()}
	}
}

type barTracker struct {
	w     io.Writer
	label string
	total int64
	start time.Time

	mu   sync.Mutex
	n    int64
	desc string // label and the latest Describe text
	bar  *progressbar.ProgressBar
	done bool
}

// barWidth is the bar's width in columns; the library narrows it to fit a
// terminal that reports its width. (OptionFullWidth, used before, computes
// the width from the reported terminal width alone, and a terminal that
// reports 0 columns, as a pty started by script(1), CI or an IDE often does,
// got a bar of width 0 or less: a label and a count with no bar.)
const barWidth = 30

// Describe replaces the text beside the bar, e.g. with the current
// validation error.
func (t *barTracker) Describe(text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.desc = text
	if t.bar != nil && !t.done {
		t.bar.Describe(text)
	}
}

func (t *barTracker) Add(n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	t.n += n
	if t.bar == nil {
		if time.Since(t.start) < progressDelay {
			return
		}
		max := t.total
		if max <= 0 {
			max = -1 // unknown: a spinner
		}
		desc := t.desc
		if desc == "" {
			desc = t.label
		}
		t.bar = progressbar.NewOptions64(max,
			progressbar.OptionSetWriter(t.w),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetWidth(barWidth),
		)
		t.bar.Set64(t.n)
		return
	}
	t.bar.Add64(n)
}

func (t *barTracker) Done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bar != nil && !t.done {
		t.bar.Finish()
		t.bar.Clear()
	}
	t.done = true
}
