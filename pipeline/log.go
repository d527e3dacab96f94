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
	"unicode/utf8"

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
//
// A text line is cut at textLineMax characters: a stage's stats can run to
// hundreds (the train stage's to 771), which wrap over a screen; the JSON
// lines and the stage's manifest.json keep them whole.
func NewLogger(w io.Writer, terminal bool) *slog.Logger {
	if terminal {
		return slog.New(slog.NewTextHandler(&lineCutter{w: w}, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: flattenAttr}))
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// textLineMax is the longest text log line, in characters: two lines of an
// 80-column terminal and a half, enough for a stage end's rows, bytes,
// seconds and tables.
const textLineMax = 200

// cutMark ends a cut line.
const cutMark = " … (all of it in manifest.json and the JSON log)"

// lineCutter cuts each line written through it to textLineMax characters.
// The text handler writes one whole line a call.
type lineCutter struct{ w io.Writer }

func (c *lineCutter) Write(p []byte) (int, error) {
	line := strings.TrimSuffix(string(p), "\n")
	if utf8.RuneCountInString(line) <= textLineMax {
		return c.w.Write(p)
	}
	keep := textLineMax - utf8.RuneCountInString(cutMark)
	cut := line
	for i := range line {
		if keep == 0 {
			cut = line[:i]
			break
		}
		keep--
	}
	if _, err := io.WriteString(c.w, cut+cutMark+"\n"); err != nil {
		return 0, err
	}
	return len(p), nil
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
		return &barTracker{w: w, label: label, total: total, start: time.Now(), now: time.Now}
	}
}

type barTracker struct {
	w     io.Writer
	label string
	total int64
	start time.Time
	now   func() time.Time // time.Now; tests move it by hand

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
		t.bar.Describe(t.description())
	}
}

// description is the text beside the bar with the step's clock,
// "[elapsed:left]", counted from the step's start. (The library's own
// clock starts when the bar is drawn, two seconds into the step, and its
// rate, taken over the first Add, counts the steps done before then as
// done at once: it read [0s:0s] for most of a fit.)
func (t *barTracker) description() string {
	desc := t.desc
	if desc == "" {
		desc = t.label
	}
	elapsed := t.now().Sub(t.start)
	clock := "[" + elapsed.Truncate(time.Second).String()
	if t.total > 0 && t.n > 0 {
		left := time.Duration(float64(elapsed) / float64(t.n) * float64(max(t.total-t.n, 0)))
		clock += ":" + left.Round(time.Second).String()
	}
	return desc + " " + clock + "]"
}

func (t *barTracker) Add(n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	t.n += n
	if t.bar == nil {
		if t.now().Sub(t.start) < progressDelay {
			return
		}
		max := t.total
		if max <= 0 {
			max = -1 // unknown: a spinner
		}
		t.bar = progressbar.NewOptions64(max,
			progressbar.OptionSetWriter(t.w),
			progressbar.OptionSetDescription(t.description()),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetWidth(barWidth),
		)
		t.bar.Set64(t.n)
		return
	}
	// The description carries the clock, at most one Add behind what is
	// drawn: the library draws at most every 200 ms, on either call.
	t.bar.Add64(n)
	t.bar.Describe(t.description())
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
