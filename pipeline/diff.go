package pipeline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"monomer/pipeline/cache"
)

// DiffOptions control Diff.
type DiffOptions struct {
	// Tolerance is the relative tolerance for floating-point cells:
	// |a-b| <= Tolerance*max(|a|,|b|). If 0, cells must be identical (NaN
	// equals NaN, 0 differs from -0).
	Tolerance float64
	// Compare compares two tables cell by cell. If nil, tables are
	// compared by their bytes.
	Compare CompareFunc
}

// CompareFunc compares the tables at paths a and b cell by cell, floating
// point cells with the relative tolerance tol (see DiffOptions); it stops
// at the first differing row when tol is 0. The runner reads no table
// format itself: the layer above passes the comparison in (stages uses
// the schema package's).
type CompareFunc func(ctx context.Context, a, b string, tol float64) (*TableDiff, error)

// TableDiff is what a CompareFunc found between two tables.
type TableDiff struct {
	// Row is the first row with a cell that differs beyond the tolerance,
	// Column the first such column in it, A and B both values as text. Row
	// is -1 when no cell differs.
	Row    int64
	Column string
	A, B   string
	// Detail describes a difference that is not a cell: another column
	// count, column name or type, or row count.
	Detail string
	// Largest is the largest relative difference between float cells seen
	// (with a tolerance only), and where.
	Largest            float64
	LargestRow         int64
	LargestColumn      string
	LargestA, LargestB string
}

// Differ reports whether the tables differ beyond the tolerance.
func (d *TableDiff) Differ() bool { return d.Row >= 0 || d.Detail != "" }

// DiffResult is what Diff found.
type DiffResult struct {
	// Identical: no difference beyond the tolerance.
	Identical bool
	// First describes the first difference (stage directories upstream
	// first, see Diff): the table's path relative to the run directories, the
	// row (0-based, -1 when the difference is not a cell), the column and
	// both values.
	Table, Column string
	Row           int64
	A, B          string
	// Detail describes a difference that is not a cell (a missing table,
	// another schema, another row count, a non-table output's hash).
	Detail string
	// Largest is the largest relative difference seen between float cells
	// (with a tolerance only), and where.
	Largest            float64
	LargestTable       string
	LargestRow         int64
	LargestColumn      string
	LargestA, LargestB string
	// How many were compared: tables cell by cell, other files by bytes.
	Tables, Files, Manifests int
}

// String is the one-line verdict the diff command prints.
func (r *DiffResult) String() string {
	var s string
	switch {
	case r.Identical:
		s = fmt.Sprintf("identical (%d tables, %d other files, %d manifests)", r.Tables, r.Files, r.Manifests)
	case r.Row >= 0:
		s = fmt.Sprintf("%s: row %d, column %s: %s vs %s", r.Table, r.Row, r.Column, r.A, r.B)
	default:
		s = fmt.Sprintf("%s: %s", r.Table, r.Detail)
	}
	if r.LargestTable != "" {
		s += fmt.Sprintf("; largest relative difference %.3g at %s row %d, column %s: %s vs %s",
			r.Largest, r.LargestTable, r.LargestRow, r.LargestColumn, r.LargestA, r.LargestB)
	}
	return s
}

// Diff compares two run directories: every file under either, matched by
// relative path (a file on one side only is a difference), *.parquet
// tables cell by cell and every other file (features/image.arrow, the
// report's HTML and PNGs, published copies) by its bytes, and every
// manifest.json on its outputs' names and hashes (times and keys are
// ignored). A manifest records what was written, not what is there now,
// so it is never trusted for a file's content: an output edited or
// damaged since it was written is a difference. The run log (RunLogName)
// is not an output and is not compared. Stage directories are compared in
// DAG order, upstream first (read from their manifests' inputs), each's
// files in path order, then its manifest; files outside any stage
// directory come last. So the first difference
// named is the upstream cause (train.monomer/params.parquet), not what it
// changed downstream (evaluate/metrics.parquet). Hidden entries (.lock,
// temporary directories) are ignored. A directory holding no stage
// directory is not a run directory, an ErrUsage: two wrong paths are not
// "identical". Without a tolerance Diff stops at the first difference;
// with one it reads every table to report the largest difference.
func Diff(ctx context.Context, a, b string, opts DiffOptions) (*DiffResult, error) {
	if opts.Tolerance < 0 || math.IsNaN(opts.Tolerance) {
		return nil, fmt.Errorf("%w: tolerance %g must be non-negative", ErrUsage, opts.Tolerance)
	}
	for _, d := range []string{a, b} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a directory", ErrUsage, d)
		}
	}
	ra, err := listRun(a)
	if err != nil {
		return nil, err
	}
	rb, err := listRun(b)
	if err != nil {
		return nil, err
	}
	res := &DiffResult{Row: -1, LargestRow: -1}
	found := false
	note := func(table, detail string) {
		if !found {
			found = true
			res.Table, res.Detail = table, detail
		}
	}
	stages := dagOrder(ra.stages, rb.stages)
	byStage := map[string][]string{} // stage directory ("" none) -> its files
	for _, rel := range cache.UnionKeys(ra.files, rb.files) {
		s := stageOf(rel, ra.stages, rb.stages)
		byStage[s] = append(byStage[s], rel)
	}
	for _, s := range append(stages, "") {
		for _, rel := range byStage[s] {
			if found && opts.Tolerance == 0 {
				break
			}
			switch {
			case !ra.files[rel]:
				note(rel, "only in "+b)
				continue
			case !rb.files[rel]:
				note(rel, "only in "+a)
				continue
			}
			table := strings.HasSuffix(rel, ".parquet")
			if table {
				res.Tables++
			} else {
				res.Files++
			}
			pa, pb := filepath.Join(a, rel), filepath.Join(b, rel)
			at, err := firstDifference(pa, pb)
			if err != nil {
				return nil, err
			}
			if at == "" {
				continue
			}
			if !table {
				note(rel, at)
				continue
			}
			if err := diffTable(ctx, opts.Compare, pa, pb, rel, opts.Tolerance, res, &found); err != nil {
				return nil, err
			}
		}
		if s == "" || found {
			continue
		}
		rel := path.Join(s, cache.ManifestName)
		ma, mb := ra.stages[s], rb.stages[s]
		switch {
		case ma == nil:
			note(rel, "only in "+b)
		case mb == nil:
			note(rel, "only in "+a)
		default:
			res.Manifests++
			if d := diffManifest(ma, mb); d != "" {
				note(rel, d)
			}
		}
	}
	res.Identical = !found
	return res, nil
}

// runListing is what Diff reads of a run directory: its files (tables and
// others, manifests and the run log excepted) and its stage directories'
// manifests, by '/'-separated relative path.
type runListing struct {
	files  map[string]bool
	stages map[string]*cache.Manifest
}

// listRun lists the files and stage directories under dir. A stage
// directory is one whose manifest places it where the runner would:
// <experiment>/<node> or, for a job-level stage, <node>. Anything else
// (a manifest deeper down, as under the parent of run directories) does
// not make dir a run directory. A folder below dir with its own run log is
// a run of its own (made by --run-id below a base directory), left out.
func listRun(dir string) (*runListing, error) {
	l := &runListing{files: map[string]bool{}, stages: map[string]*cache.Manifest{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			// A run directory inside this one (--run-id makes one below the
			// base run directory) is another run, not part of this one.
			if _, err := os.Lstat(filepath.Join(p, RunLogName)); err == nil && p != dir {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == RunLogName:
			// not an output: it records times and run ids
		case d.Name() != cache.ManifestName:
			l.files[rel] = true
		default:
			m, err := cache.ReadManifest(filepath.Dir(p))
			if err != nil {
				return fmt.Errorf("%w manifest: %w", ErrUnreadable, err)
			}
			sdir := path.Dir(rel)
			if exp, _, ok := strings.Cut(sdir, "/"); (ok && exp == m.Inputs.Experiment && !strings.Contains(sdir[len(exp)+1:], "/")) ||
				(!ok && m.Inputs.Experiment == "" && sdir != ".") {
				l.stages[sdir] = m
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrUnreadable) {
			return nil, fmt.Errorf("pipeline: diff: %w", err)
		}
		return nil, fmt.Errorf("pipeline: diff: %w run directory: %w", ErrUnreadable, err)
	}
	if len(l.stages) == 0 {
		return nil, fmt.Errorf("%w: %s is not a run directory: no stage directory with a %s in it", ErrUsage, dir, cache.ManifestName)
	}
	return l, nil
}

// dagOrder orders the stage directories of both runs upstream first: each
// manifest names its upstream stages, and among the stages ready at a
// step the first in path order goes next (a/ingest, a/features, ... before
// b/ingest).
func dagOrder(a, b map[string]*cache.Manifest) []string {
	deps := map[string][]string{}
	for _, m := range []map[string]*cache.Manifest{a, b} {
		for s, man := range m {
			for _, u := range man.Inputs.Upstream {
				deps[s] = append(deps[s], path.Join(u.Experiment, u.Stage))
			}
		}
	}
	todo := cache.UnionKeys(a, b)
	done := make(map[string]bool, len(todo))
	order := make([]string, 0, len(todo))
	for len(todo) > 0 {
		next := 0 // a cycle cannot come from the runner; take the first then
		for i, s := range todo {
			if !slices.ContainsFunc(deps[s], func(d string) bool { return !done[d] && (a[d] != nil || b[d] != nil) }) {
				next = i
				break
			}
		}
		done[todo[next]] = true
		order = append(order, todo[next])
		todo = slices.Delete(todo, next, next+1)
	}
	return order
}

// stageOf is the stage directory a file belongs to ("" when none).
func stageOf(rel string, a, b map[string]*cache.Manifest) string {
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if a[d] != nil || b[d] != nil {
			return d
		}
	}
	return ""
}

// firstDifference compares two files' bytes: "" when they are the same,
// else where they first differ. Identical tables need no parsing.
func firstDifference(a, b string) (string, error) {
	fa, err := os.Open(a)
	if err != nil {
		return "", fmt.Errorf("pipeline: diff: %w file: %w", ErrUnreadable, err)
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return "", fmt.Errorf("pipeline: diff: %w file: %w", ErrUnreadable, err)
	}
	defer fb.Close()
	ra, rb := bufio.NewReaderSize(fa, 1<<20), bufio.NewReaderSize(fb, 1<<20)
	ba, bb := make([]byte, 1<<16), make([]byte, 1<<16)
	var off int64
	for {
		na, ea := io.ReadFull(ra, ba)
		nb, eb := io.ReadFull(rb, bb)
		for _, e := range []error{ea, eb} {
			if e != nil && !errors.Is(e, io.EOF) && !errors.Is(e, io.ErrUnexpectedEOF) {
				return "", fmt.Errorf("pipeline: diff: %w file: %w", ErrUnreadable, e)
			}
		}
		n := min(na, nb)
		for i := range n {
			if ba[i] != bb[i] {
				return fmt.Sprintf("other bytes from byte %d", off+int64(i)), nil
			}
		}
		off += int64(n)
		switch {
		case na != nb:
			return fmt.Sprintf("other length: one ends at byte %d, the other goes on", off), nil
		case ea != nil: // both ended here
			return "", nil
		}
	}
}

// diffTable compares two tables cell by cell (compare; by their bytes if
// nil) and records the first difference and the largest relative one in
// res.
func diffTable(ctx context.Context, compare CompareFunc, pa, pb, rel string, tol float64, res *DiffResult, found *bool) error {
	if compare == nil {
		compare = compareBytes
	}
	d, err := compare(ctx, pa, pb, tol)
	if err != nil {
		return fmt.Errorf("pipeline: diff: %w table: %w", ErrUnreadable, err)
	}
	if d.Largest > res.Largest {
		res.Largest, res.LargestTable, res.LargestRow, res.LargestColumn = d.Largest, rel, d.LargestRow, d.LargestColumn
		res.LargestA, res.LargestB = d.LargestA, d.LargestB
	}
	if d.Differ() && !*found {
		*found = true
		res.Table, res.Row, res.Column, res.A, res.B, res.Detail = rel, d.Row, d.Column, d.A, d.B, d.Detail
	}
	return nil
}

// compareBytes is the CompareFunc of a runner given none: tables are the
// same when their bytes are.
func compareBytes(_ context.Context, a, b string, _ float64) (*TableDiff, error) {
	at, err := firstDifference(a, b)
	if err != nil {
		return nil, err
	}
	d := &TableDiff{Row: -1, LargestRow: -1}
	if at != "" {
		d.Detail = "other bytes (no table comparison given)"
	}
	return d, nil
}

// diffManifest compares two manifests on their outputs: the same names, and
// the same recorded hashes for every output that is not a table (the files
// themselves were compared byte for byte before).
func diffManifest(ma, mb *cache.Manifest) string {
	oa, ob := ma.OutputMap(), mb.OutputMap()
	for _, k := range cache.UnionKeys(oa, ob) {
		ha, inA := oa[k]
		hb, inB := ob[k]
		switch {
		case !inA:
			return fmt.Sprintf("output %s only in the second", k)
		case !inB:
			return fmt.Sprintf("output %s only in the first", k)
		case strings.HasSuffix(k, ".parquet"):
			// compared by content above
		case ha != hb:
			return fmt.Sprintf("output %s differs (sha256 %s vs %s)", k, cache.Short(ha), cache.Short(hb))
		}
	}
	return ""
}
