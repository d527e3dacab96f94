package pipeline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"monomer/internal/sidefile"
)

// RunLogName is the file, at the run directory's root, where every run
// appends a "start" record once it holds the directory's lock and an "end"
// record when it finishes, so what happened to a directory can be read
// afterwards. A run killed outright (SIGKILL, the OOM killer, a power cut)
// leaves its start record without an end.
const RunLogName = "runlog.jsonl"

// RunRecord is one line of the run log.
type RunRecord struct {
	// Event is "start" or "end".
	Event string    `json:"event"`
	RunID string    `json:"run_id"`
	Job   string    `json:"job"`
	Time  time.Time `json:"time"`
	PID   int       `json:"pid"`
	// Command is the process's command line (Options.Command).
	Command []string `json:"command,omitempty"`
	// Version is the build (Version) and BLAS the BLAS (Options.BLAS).
	Version string `json:"version"`
	BLAS    string `json:"blas,omitempty"`
	// The end record's outcome: the exit code (Options.ExitCode), the
	// error, the run's wall seconds and which stages ran, were up to date,
	// were restored from the store, failed, or were left out because an
	// upstream stage failed.
	ExitCode *int    `json:"exit_code,omitempty"`
	Error    string  `json:"error,omitempty"`
	Seconds  float64 `json:"seconds,omitempty"`
	Stages   *Stages `json:"stages,omitempty"`
}

// Stages lists a run's stage IDs by what happened to them.
type Stages struct {
	Run      []string `json:"run"`
	Skipped  []string `json:"skipped"`
	Restored []string `json:"restored"`
	Failed   []string `json:"failed"`
	Blocked  []string `json:"blocked"`
}

// NewRunID is a run ID for a run given none: its start time (UTC, to the
// second) and process ID, unique on a host.
func NewRunID(t time.Time) string {
	return t.UTC().Format("20060102T150405Z") + "-" + strconv.Itoa(os.Getpid())
}

// appendRunLog appends rec to dir's run log as one line in one write(2) on
// a file opened O_APPEND, so concurrent runs (of different experiments in
// one directory) do not interleave and a process killed mid-call leaves
// either the whole line or none of it. Should an earlier line be torn (a
// crash of the machine, a full disk), the record starts on a new line so
// that it reads whole. A link, a directory, a pipe or a file that is not a
// run log (isRunLog) at its name is not appended to: ErrUsage naming it.
func appendRunLog(dir string, rec *RunRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	path := filepath.Join(dir, RunLogName)
	f, err := sidefile.Open(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return runLogError(err)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		if !isRunLog(f, fi.Size()) {
			f.Close()
			return runLogError(sidefile.Foreign(path, "a file that is not a run log (its lines are not monomer's JSON records)"))
		}
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			b = append([]byte{'\n'}, b...)
		}
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pipeline: run log: %w", err)
	}
	return nil
}

func runLogError(err error) error {
	if errors.Is(err, sidefile.ErrForeign) {
		return fmt.Errorf("pipeline: %w: run log: %w", ErrUsage, err)
	}
	return fmt.Errorf("pipeline: run log: %w", err)
}

// recordStart is how every line json.Marshal makes of a RunRecord starts
// (Event is its first field).
const recordStart = `{"event":"`

// isRunLog reports whether the first and the last line of the size bytes of
// f are monomer's records, or torn ones (a prefix of one). Only the ends
// are read: a log appended to by every run of years of cron grows long.
func isRunLog(f *os.File, size int64) bool {
	const window = 4096
	ok := func(line []byte) bool {
		line = bytes.TrimSpace(line)
		n := min(len(line), len(recordStart))
		return string(line[:n]) == recordStart[:n]
	}
	b := make([]byte, min(size, window))
	n, _ := f.ReadAt(b, 0)
	first, _, _ := bytes.Cut(b[:n], []byte("\n"))
	if !ok(first) {
		return false
	}
	n, _ = f.ReadAt(b, size-int64(len(b)))
	tail := bytes.TrimRight(b[:n], "\n")
	if i := bytes.LastIndexByte(tail, '\n'); i >= 0 || int64(n) == size {
		return ok(tail[i+1:])
	}
	return true // one line longer than the window: its start was checked
}

// ReadRunLog reads dir's run log, oldest first. Lines that do not parse
// (a torn line) are skipped and counted in skipped; a missing log is no
// records.
func ReadRunLog(dir string) (recs []RunRecord, skipped int, err error) {
	f, err := sidefile.Open(filepath.Join(dir, RunLogName), os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var rec RunRecord
			if json.Unmarshal(line, &rec) != nil || rec.Event == "" {
				skipped++
			} else {
				recs = append(recs, rec)
			}
		}
		if err == io.EOF {
			return recs, skipped, nil
		}
		if err != nil {
			return recs, skipped, err
		}
	}
}
