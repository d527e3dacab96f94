package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"monomer/pipeline"
)

// killAt returns a runHook that SIGKILLs the run at a point given as
// "[EXPERIMENT/]STAGE:WHEN" (GO_MONOMER_KILL_AT), WHEN one of
//
//	start       when the runner logs the stage's start, before it runs
//	end         when it logs the stage's end, its manifest written
//	progress=N  at the stage's N-th progress report (training iterations)
//
// The process kills itself from the goroutine that logs or reports, so the
// point is the same on every run, however loaded the machine.
func killAt(spec string) func(*pipeline.Options) {
	id, when, _ := strings.Cut(spec, ":")
	k := &killPoint{when: when}
	k.exp, k.stage, _ = strings.Cut(id, "/")
	if k.stage == "" {
		k.exp, k.stage = "", id
	}
	if n, ok := strings.CutPrefix(when, "progress="); ok {
		var err error
		if k.progress, err = strconv.Atoi(n); err != nil || k.progress < 1 {
			panic(fmt.Sprintf("GO_MONOMER_KILL_AT %q: want progress=N, N ≥ 1", spec))
		}
	} else if when != "start" && when != "end" {
		panic(fmt.Sprintf("GO_MONOMER_KILL_AT %q: want STAGE:start, :end or :progress=N", spec))
	}
	return func(o *pipeline.Options) {
		o.Logger = slog.New(killHandler{o.Logger.Handler(), k})
		inner := o.Tracker
		o.Tracker = func(label string, total int64) pipeline.Tracker {
			var t pipeline.Tracker = nopTracker{}
			if inner != nil {
				t = inner(label, total)
			}
			return killTracker{t, k}
		}
	}
}

type killPoint struct {
	exp, stage, when string
	progress         int
	armed            bool // the stage has started (for progress=N)
	reports          int  // progress reports since
}

func kill() {
	p, _ := os.FindProcess(os.Getpid())
	p.Kill()
	select {} // the signal ends the process before anything else runs here
}

// killHandler logs as its Handler does and then kills at the start or end
// line of the chosen stage.
type killHandler struct {
	slog.Handler
	k *killPoint
}

func (h killHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	var exp, stage string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "experiment":
			exp = a.Value.String()
		case "stage":
			stage = a.Value.String()
		}
		return true
	})
	if exp != h.k.exp || stage != h.k.stage {
		return err
	}
	switch {
	case r.Message == "stage start" && h.k.when == "start", r.Message == "stage end" && h.k.when == "end":
		kill()
	case r.Message == "stage start":
		h.k.armed = true
	}
	return err
}

func (h killHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return killHandler{h.Handler.WithAttrs(as), h.k}
}

func (h killHandler) WithGroup(name string) slog.Handler {
	return killHandler{h.Handler.WithGroup(name), h.k}
}

type killTracker struct {
	pipeline.Tracker
	k *killPoint
}

func (t killTracker) Add(n int64) {
	t.Tracker.Add(n)
	if t.k.armed {
		if t.k.reports++; t.k.reports == t.k.progress {
			kill()
		}
	}
}

type nopTracker struct{}

func (nopTracker) Add(int64) {}
func (nopTracker) Done()     {}
