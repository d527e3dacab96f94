package pipeline

import (
	"io"
	"log/slog"
	"os"
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
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
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
	bar  *progressbar.ProgressBar
	done bool
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
		t.bar = progressbar.NewOptions64(max,
			progressbar.OptionSetWriter(t.w),
			progressbar.OptionSetDescription(t.label),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionFullWidth(),
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
