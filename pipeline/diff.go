package pipeline

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"monomer/schema"
)

// DiffOptions control Diff.
type DiffOptions struct {
	// Tolerance is the relative tolerance for floating-point cells:
	// |a-b| <= Tolerance*max(|a|,|b|). If 0, cells must be identical (NaN
	// equals NaN, 0 differs from -0).
	Tolerance float64
}

// DiffResult is what Diff found.
type DiffResult struct {
	// Identical: no difference beyond the tolerance.
	Identical bool
	// First describes the first difference (tables in path order, then
	// manifests): the table's path relative to the run directories, the
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
	Tables, Manifests  int // how many were compared
}

// String is the one-line verdict the diff command prints.
func (r *DiffResult) String() string {
	var s string
	switch {
	case r.Identical:
		s = fmt.Sprintf("identical (%d tables, %d manifests)", r.Tables, r.Manifests)
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

// Diff compares two run directories: every *.parquet table under either,
// matched by relative path (a table on one side only is a difference),
// cell by cell; then every manifest.json on its outputs' hashes (tables
// excepted, they were compared by content; times and keys are ignored).
// Hidden entries (.lock, temporary directories) are ignored. Without a
// tolerance it stops at the first difference; with one it reads every table
// to report the largest difference.
func Diff(a, b string, opts DiffOptions) (*DiffResult, error) {
	if opts.Tolerance < 0 || math.IsNaN(opts.Tolerance) {
		return nil, fmt.Errorf("%w: tolerance %g must be non-negative", ErrUsage, opts.Tolerance)
	}
	for _, d := range []string{a, b} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a directory", ErrUsage, d)
		}
	}
	ta, ma, err := listRun(a)
	if err != nil {
		return nil, err
	}
	tb, mb, err := listRun(b)
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
	for _, rel := range union(ta, tb) {
		if found && opts.Tolerance == 0 {
			break
		}
		switch {
		case !ta[rel]:
			note(rel, "only in "+b)
			continue
		case !tb[rel]:
			note(rel, "only in "+a)
			continue
		}
		res.Tables++
		pa, pb := filepath.Join(a, rel), filepath.Join(b, rel)
		same, err := sameBytes(pa, pb)
		if err != nil {
			return nil, err
		}
		if same {
			continue
		}
		if err := diffTable(pa, pb, rel, opts.Tolerance, res, &found); err != nil {
			return nil, err
		}
	}
	for _, rel := range union(ma, mb) {
		if found {
			break
		}
		switch {
		case !ma[rel]:
			note(rel, "only in "+b)
			continue
		case !mb[rel]:
			note(rel, "only in "+a)
			continue
		}
		res.Manifests++
		if d, err := diffManifest(filepath.Join(a, rel), filepath.Join(b, rel)); err != nil {
			return nil, err
		} else if d != "" {
			note(rel, d)
		}
	}
	res.Identical = !found
	return res, nil
}

// listRun returns the relative paths of the tables and manifests under dir.
func listRun(dir string) (tables, manifests map[string]bool, err error) {
	tables, manifests = map[string]bool{}, map[string]bool{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasSuffix(rel, ".parquet"):
			tables[rel] = true
		case d.Name() == ManifestName:
			manifests[rel] = true
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("pipeline: diff: %w run directory: %w", ErrUnreadable, err)
	}
	return tables, manifests, nil
}

func union(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if !a[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// sameBytes compares two files' contents; identical files need no parsing.
func sameBytes(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, fmt.Errorf("pipeline: diff: %w table: %w", ErrUnreadable, err)
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, fmt.Errorf("pipeline: diff: %w table: %w", ErrUnreadable, err)
	}
	defer fb.Close()
	sa, _ := fa.Stat()
	sb, _ := fb.Stat()
	if sa.Size() != sb.Size() {
		return false, nil
	}
	ra, rb := bufio.NewReaderSize(fa, 1<<20), bufio.NewReaderSize(fb, 1<<20)
	ba, bb := make([]byte, 1<<16), make([]byte, 1<<16)
	for {
		na, ea := io.ReadFull(ra, ba)
		nb, eb := io.ReadFull(rb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea != nil || eb != nil {
			return errors.Is(ea, io.EOF) || errors.Is(ea, io.ErrUnexpectedEOF), nil
		}
	}
}

// diffTable compares two tables cell by cell. The first difference is the
// smallest row with one, and in it the first column.
func diffTable(pa, pb, rel string, tol float64, res *DiffResult, found *bool) error {
	ta, err := schema.ReadTable(pa)
	if err != nil {
		return fmt.Errorf("pipeline: diff: %w table: %w", ErrUnreadable, err)
	}
	defer ta.Release()
	tb, err := schema.ReadTable(pb)
	if err != nil {
		return fmt.Errorf("pipeline: diff: %w table: %w", ErrUnreadable, err)
	}
	defer tb.Release()
	set := func(detail string) {
		if !*found {
			*found = true
			res.Table, res.Detail, res.Row = rel, detail, -1
		}
	}
	if ta.NumCols() != tb.NumCols() {
		set(fmt.Sprintf("%d columns vs %d", ta.NumCols(), tb.NumCols()))
		return nil
	}
	for c := 0; c < int(ta.NumCols()); c++ {
		fa, fb := ta.Schema().Field(c), tb.Schema().Field(c)
		if fa.Name != fb.Name || !arrow.TypeEqual(fa.Type, fb.Type) {
			set(fmt.Sprintf("column %d is %s %s vs %s %s", c, fa.Name, fa.Type, fb.Name, fb.Type))
			return nil
		}
	}
	rows := min(ta.NumRows(), tb.NumRows())
	first := int64(-1)
	var firstCol, va, vb string
	for c := 0; c < int(ta.NumCols()); c++ {
		name := ta.Schema().Field(c).Name
		limit := rows
		if first >= 0 && tol == 0 {
			limit = first // a difference in an earlier row is already known
		}
		ca, cb := newCursor(ta.Column(c).Data()), newCursor(tb.Column(c).Data())
		for r := int64(0); r < limit; r++ {
			xa, ia := ca.at(r)
			xb, ib := cb.at(r)
			eq, rel64, sa, sb := cellEqual(xa, ia, xb, ib, tol)
			if rel64 > res.Largest {
				res.Largest, res.LargestTable, res.LargestRow, res.LargestColumn = rel64, rel, r, name
				res.LargestA, res.LargestB = cellString(xa, ia), cellString(xb, ib)
			}
			if !eq && (first < 0 || r < first) {
				first, firstCol, va, vb = r, name, sa, sb
				if tol == 0 {
					break
				}
			}
		}
	}
	if first >= 0 {
		if !*found {
			*found = true
			res.Table, res.Row, res.Column, res.A, res.B = rel, first, firstCol, va, vb
		}
		return nil
	}
	if ta.NumRows() != tb.NumRows() {
		set(fmt.Sprintf("%d rows vs %d (the first %d are equal)", ta.NumRows(), tb.NumRows(), rows))
	}
	return nil
}

// cursor walks a chunked column by global row, forward.
type cursor struct {
	chunks []arrow.Array
	k      int
	base   int64
}

func newCursor(ch *arrow.Chunked) *cursor { return &cursor{chunks: ch.Chunks()} }

func (c *cursor) at(r int64) (arrow.Array, int) {
	for c.k < len(c.chunks) && r >= c.base+int64(c.chunks[c.k].Len()) {
		c.base += int64(c.chunks[c.k].Len())
		c.k++
	}
	return c.chunks[c.k], int(r - c.base)
}

// cellEqual compares a[i] with b[j] (same type). It returns whether they
// are equal within tol, the largest relative difference between float
// values in them, and, when unequal, both values as text.
func cellEqual(a arrow.Array, i int, b arrow.Array, j int, tol float64) (bool, float64, string, string) {
	eq, rel := valueEqual(a, i, b, j, tol)
	if eq {
		return true, rel, "", ""
	}
	return false, rel, cellString(a, i), cellString(b, j)
}

func valueEqual(a arrow.Array, i int, b arrow.Array, j int, tol float64) (bool, float64) {
	if a.IsNull(i) || b.IsNull(j) {
		return a.IsNull(i) && b.IsNull(j), 0
	}
	switch x := a.(type) {
	case *array.Float32:
		return floatEqual(float64(x.Value(i)), float64(b.(*array.Float32).Value(j)), tol)
	case *array.Float64:
		return floatEqual(x.Value(i), b.(*array.Float64).Value(j), tol)
	case *array.String:
		return x.Value(i) == b.(*array.String).Value(j), 0
	case *array.Int32:
		return x.Value(i) == b.(*array.Int32).Value(j), 0
	case *array.Int64:
		return x.Value(i) == b.(*array.Int64).Value(j), 0
	case *array.Int8:
		return x.Value(i) == b.(*array.Int8).Value(j), 0
	case *array.Boolean:
		return x.Value(i) == b.(*array.Boolean).Value(j), 0
	case array.ListLike:
		y := b.(array.ListLike)
		sa, ea := x.ValueOffsets(i)
		sb, eb := y.ValueOffsets(j)
		if ea-sa != eb-sb {
			return false, 0
		}
		eq, worst := true, 0.0
		va, vb := x.ListValues(), y.ListValues()
		for k := int64(0); k < ea-sa; k++ {
			e, r := valueEqual(va, int(sa+k), vb, int(sb+k), tol)
			eq = eq && e
			worst = max(worst, r)
			if !eq && tol == 0 {
				break
			}
		}
		return eq, worst
	}
	return a.ValueStr(i) == b.ValueStr(j), 0
}

// floatEqual compares within relative tolerance tol (bitwise when 0).
func floatEqual(x, y, tol float64) (bool, float64) {
	switch {
	case math.IsNaN(x) || math.IsNaN(y):
		return math.IsNaN(x) && math.IsNaN(y), 0
	case tol == 0:
		return math.Float64bits(x) == math.Float64bits(y), 0
	case x == y:
		return true, 0
	case math.IsInf(x, 0) || math.IsInf(y, 0):
		return false, math.Inf(1)
	}
	rel := math.Abs(x-y) / max(math.Abs(x), math.Abs(y))
	return rel <= tol, rel
}

func cellString(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "null"
	}
	switch x := a.(type) {
	case *array.Float32:
		return strconv.FormatFloat(float64(x.Value(i)), 'g', -1, 32)
	case *array.Float64:
		return strconv.FormatFloat(x.Value(i), 'g', -1, 64)
	case *array.String:
		return strconv.Quote(x.Value(i))
	}
	s := a.ValueStr(i)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// diffManifest compares two manifests on their outputs: the same names, and
// the same hashes for every output that is not a table.
func diffManifest(pa, pb string) (string, error) {
	ma, err := ReadManifest(filepath.Dir(pa))
	if err != nil {
		return "", fmt.Errorf("pipeline: diff: %w manifest: %w", ErrUnreadable, err)
	}
	mb, err := ReadManifest(filepath.Dir(pb))
	if err != nil {
		return "", fmt.Errorf("pipeline: diff: %w manifest: %w", ErrUnreadable, err)
	}
	oa, ob := ma.outputMap(), mb.outputMap()
	names := map[string]bool{}
	for k := range oa {
		names[k] = true
	}
	for k := range ob {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		ha, inA := oa[k]
		hb, inB := ob[k]
		switch {
		case !inA:
			return fmt.Sprintf("output %s only in the second", k), nil
		case !inB:
			return fmt.Sprintf("output %s only in the first", k), nil
		case strings.HasSuffix(k, ".parquet"):
			// compared by content above
		case ha != hb:
			return fmt.Sprintf("output %s differs (sha256 %s vs %s)", k, short(ha), short(hb)), nil
		}
	}
	return "", nil
}
