package imagefeat

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"github.com/apache/arrow-go/v18/parquet/file"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// vecRow is one row of a test embeddings file; a nil vec is a null vector.
type vecRow struct {
	id  string
	vec []float64
}

// writeVectors writes rows as a Parquet table with an id column idCol and
// a vector column "emb" of type vt (a list or fixed-size list of float32
// or float64), as pyarrow would.
func writeVectors(t testing.TB, path, idCol string, vt arrow.DataType, rows []vecRow) {
	t.Helper()
	writeVectorsID(t, path, idCol, arrow.BinaryTypes.String, vt, rows)
}

// writeVectorsID is writeVectors with an id column of type idType
// (string or large_string).
func writeVectorsID(t testing.TB, path, idCol string, idType, vt arrow.DataType, rows []vecRow) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "title", Type: arrow.BinaryTypes.String, Nullable: true}, // ignored
		{Name: idCol, Type: idType, Nullable: true},
		{Name: "emb", Type: vt, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.StringBuilder).Append("t " + r.id)
		b.Field(1).(interface{ Append(string) }).Append(r.id)
		lb := b.Field(2).(array.ListLikeBuilder)
		if r.vec == nil {
			lb.AppendNull()
			continue
		}
		lb.Append(true)
		for _, v := range r.vec {
			switch vb := lb.ValueBuilder().(type) {
			case *array.Float32Builder:
				vb.Append(float32(v))
			case *array.Float64Builder:
				vb.Append(v)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(sc, f, nil, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeNPY writes rows (all of one length) as a .npy matrix of width-byte
// floats and, unless ids is false, the id file beside it.
func writeNPY(t testing.TB, path string, width int, rows []vecRow, ids bool) {
	t.Helper()
	b := appendNPYHeader(nil, int64(len(rows)), int64(len(rows[0].vec)), width)
	var names []string
	for _, r := range rows {
		for _, v := range r.vec {
			if width == 4 {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
			} else {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			}
		}
		names = append(names, r.id)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if ids {
		idPath, _ := npyIDFile(path)
		if err := os.WriteFile(idPath, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// testItems are the items of the embeddings tests: A, B, C at rows 0-2.
var testItems = map[string]int32{"A": 0, "B": 1, "C": 2}

// readMatrix returns the rows of the matrix file at path.
func readMatrix(t *testing.T, path string) [][]float32 {
	t.Helper()
	m, err := OpenMatrix(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out := make([][]float32, m.Rows())
	for i := range out {
		out[i] = slices.Clone(m.Row(i))
	}
	return out
}

// TestEmbeddingsRoundTrip: every accepted layout (Parquet list, large
// list and fixed-size list of float32 and float64, keyed by asin or
// parent_asin, string or large_string; .npy of float32 and float64) gives the same matrix: the
// vectors of the wanted ids at their rows, converted to float32, zeros for
// an item without one, and no scaling.
func TestEmbeddingsRoundTrip(t *testing.T) {
	rows := []vecRow{
		{"C", []float64{0.5, -1.25, 3}},
		{"Z", []float64{1, 1, 1}}, // not an item
		{"A", []float64{1.0 / 3, 2e-8, -7}},
	}
	want := [][]float32{{1.0 / 3, 2e-8, -7}, {0, 0, 0}, {0.5, -1.25, 3}}
	dir := t.TempDir()
	type layout struct {
		name string
		make func(path string)
	}
	var layouts []layout
	for _, elem := range []arrow.DataType{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64} {
		for _, vt := range []arrow.DataType{arrow.ListOf(elem), arrow.LargeListOf(elem), arrow.FixedSizeListOf(3, elem)} {
			for _, idCol := range []string{"asin", "parent_asin"} {
				layouts = append(layouts, layout{idCol + " " + vt.String(), func(path string) { writeVectors(t, path, idCol, vt, rows) }})
			}
		}
	}
	// polars writes large_string ids and large lists.
	layouts = append(layouts, layout{"large_string id", func(path string) {
		writeVectorsID(t, path, "parent_asin", arrow.BinaryTypes.LargeString, arrow.LargeListOf(arrow.PrimitiveTypes.Float32), rows)
	}})
	for _, w := range []int{4, 8} {
		layouts = append(layouts, layout{"npy f" + string(rune('0'+w)), func(path string) { writeNPY(t, path, w, rows, true) }})
	}
	var first []byte
	for k, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			path := filepath.Join(dir, "emb"+string(rune('a'+k))+".parquet")
			if strings.HasPrefix(l.name, "npy") {
				path = strings.TrimSuffix(path, ".parquet") + ".npy"
			}
			l.make(path)
			out := filepath.Join(dir, "m"+string(rune('a'+k))+".arrow")
			st, err := ExtractEmbeddings(context.Background(), path, testItems, 3, 0, out)
			if err != nil {
				t.Fatal(err)
			}
			if st.Kept != 2 || st.Unknown != 1 || st.Rejected != 0 || st.Rows != 3 || st.Dim != 3 ||
				!slices.Equal(st.Missing, []int32{1}) || st.FirstUnknown == "" {
				t.Errorf("stats %+v", st)
			}
			if got := readMatrix(t, out); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("matrix %v, want %v", got, want)
			}
			// The bytes depend on the vectors only, not on the layout.
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = b
			} else if !bytes.Equal(b, first) {
				t.Errorf("matrix bytes differ from the first layout's")
			}
		})
	}
}

// TestEmbeddingsValidation: each kind of bad row is counted under its
// reason and skipped (the first good row of an id wins); over the reject
// threshold the error wraps ErrEmbeddings and names the first bad row's
// place. Ids that are not items are counted, never rejected.
func TestEmbeddingsValidation(t *testing.T) {
	f32 := arrow.ListOf(arrow.PrimitiveTypes.Float32)
	good := []float64{1, 2}
	cases := []struct {
		name     string
		rows     []vecRow
		kept     int64
		count    func(EmbeddingStats) int64 // the reason's counter; 1 expected
		firstBad string                     // in the error at ratio 0; "" when nothing is rejected
	}{
		{"NaN", []vecRow{{"A", good}, {"B", []float64{1, math.NaN()}}, {"C", good}}, 2,
			func(s EmbeddingStats) int64 { return s.NonFinite }, "row 1: id B: non-finite value NaN at position 1"},
		{"infinite", []vecRow{{"A", []float64{math.Inf(-1), 0}}, {"A", good}}, 1,
			func(s EmbeddingStats) int64 { return s.NonFinite }, "row 0: id A: non-finite value -Inf at position 0"},
		{"wrong dimension", []vecRow{{"A", good}, {"B", []float64{1, 2, 3}}}, 1,
			func(s EmbeddingStats) int64 { return s.WrongDim }, "row 1: id B: dimension 3, want 2"},
		{"duplicate id", []vecRow{{"A", good}, {"B", good}, {"A", []float64{3, 4}}}, 2,
			func(s EmbeddingStats) int64 { return s.Duplicates }, "row 2: duplicate id A"},
		{"duplicate unknown id", []vecRow{{"Q", good}, {"A", good}, {"Q", good}}, 1,
			func(s EmbeddingStats) int64 { return s.Duplicates }, "row 2: duplicate id Q"},
		{"null vector", []vecRow{{"A", nil}, {"A", good}}, 1,
			func(s EmbeddingStats) int64 { return s.NullRows }, "row 0: id A: null vector"},
		{"empty id", []vecRow{{"", good}, {"A", good}}, 1,
			func(s EmbeddingStats) int64 { return s.EmptyIDs }, "row 0: empty id"},
		{"unknown id", []vecRow{{"A", good}, {"Q", good}, {"R", good}}, 1,
			func(s EmbeddingStats) int64 { return s.Unknown / 2 }, ""},
	}
	dir := t.TempDir()
	for k, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "e"+string(rune('a'+k))+".parquet")
			writeVectors(t, path, "parent_asin", f32, tc.rows)
			out := filepath.Join(dir, "m.arrow")
			// A negative ratio never fails: the stats count the row.
			st, err := ExtractEmbeddings(context.Background(), path, testItems, 3, -1, out)
			if err != nil {
				t.Fatal(err)
			}
			if st.Kept != tc.kept || tc.count(st) != 1 || st.Kept+st.Unknown+st.Rejected != st.Rows {
				t.Errorf("stats %+v", st)
			}
			if tc.firstBad == "" {
				if st.Rejected != 0 {
					t.Errorf("rejected %d, want 0", st.Rejected)
				}
			} else if !strings.HasPrefix(st.FirstReject, tc.firstBad) {
				t.Errorf("first reject %q, want %q", st.FirstReject, tc.firstBad)
			}
			// At ratio 0 one reject fails, naming it; 0.5 of the rows tolerates it.
			_, err = ExtractEmbeddings(context.Background(), path, testItems, 3, 0, out)
			if tc.firstBad == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrEmbeddings) || !strings.Contains(err.Error(), tc.firstBad) || !strings.Contains(err.Error(), filepath.Base(path)) {
				t.Errorf("ratio 0: %v, want ErrEmbeddings naming %s and %q", err, filepath.Base(path), tc.firstBad)
			}
			if _, serr := os.Stat(out); serr == nil {
				t.Error("the matrix of a failed extraction was left behind")
			}
			if _, err := ExtractEmbeddings(context.Background(), path, testItems, 3, 0.5, out); err != nil {
				t.Errorf("ratio 0.5: %v", err)
			}
		})
	}
}

// TestEmbeddingsBadFiles: files that cannot be read at all wrap
// ErrEmbeddings with what is wrong and where.
func TestEmbeddingsBadFiles(t *testing.T) {
	dir := t.TempDir()
	rows := []vecRow{{"A", []float64{1, 2}}, {"B", []float64{3, 4}}}
	npyHeader := func(dict string) []byte {
		b := append([]byte(npyMagic), 1, 0)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)+1))
		return append(append(b, dict...), '\n')
	}
	cases := []struct {
		name, file string
		make       func(path string)
		want       string
	}{
		{"npy without ids", "noids.npy", func(p string) { writeNPY(t, p, 4, rows, false) }, "no id file noids.ids.txt"},
		{"npy ids short", "short.npy", func(p string) {
			writeNPY(t, p, 4, rows, true)
			os.WriteFile(filepath.Join(dir, "short.ids.txt"), []byte("A\n"), 0o644)
		}, "1 lines for the 2 rows"},
		{"npy ids long", "long.npy", func(p string) {
			writeNPY(t, p, 4, rows, true)
			os.WriteFile(filepath.Join(dir, "long.ids.txt"), []byte("A\nB\nC\n"), 0o644)
		}, "line 3"},
		{"npy fortran order", "fortran.npy", func(p string) {
			os.WriteFile(p, append(npyHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 1), }"), 0, 0, 0, 0), 0o644)
		}, "fortran_order True"},
		{"npy int dtype", "int.npy", func(p string) {
			os.WriteFile(p, append(npyHeader("{'descr': '<i4', 'fortran_order': False, 'shape': (1, 1), }"), 0, 0, 0, 0), 0o644)
		}, `dtype "<i4"`},
		{"npy 1-d", "vec.npy", func(p string) {
			os.WriteFile(p, append(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"), 0, 0, 0, 0), 0o644)
		}, "shape of 1 dimensions"},
		{"npy short data", "cut.npy", func(p string) {
			os.WriteFile(p, append(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"), 0, 0, 0, 0), 0o644)
		}, "makes"},
		{"not npy", "text.npy", func(p string) { os.WriteFile(p, []byte("A 1 2\n"), 0o644) }, "no \\x93NUMPY magic"},
		{"parquet without id", "noid.parquet", func(p string) { writeVectors(t, p, "item", arrow.ListOf(arrow.PrimitiveTypes.Float32), rows) }, "no id column"},
		{"parquet int vectors", "ints.parquet", func(p string) {
			writeVectors(t, p, "asin", arrow.ListOf(arrow.PrimitiveTypes.Int32), nil)
		}, "no vector column"},
		{"not parquet", "text.parquet", func(p string) { os.WriteFile(p, []byte("A,1,2\n"), 0o644) }, "text.parquet"},
		{"no usable vector", "bad.parquet", func(p string) {
			writeVectors(t, p, "asin", arrow.ListOf(arrow.PrimitiveTypes.Float32), []vecRow{{"A", nil}})
		}, "no usable vector"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			tc.make(path)
			_, err := ExtractEmbeddings(context.Background(), path, testItems, 3, -1, filepath.Join(dir, "m.arrow"))
			if !errors.Is(err, ErrEmbeddings) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want ErrEmbeddings with %q", err, tc.want)
			}
		})
	}
}

// TestNPYHeader: what NumPy writes parses, in every version and key
// order; departures from it are errors at the offending byte.
func TestNPYHeader(t *testing.T) {
	hdr := func(major byte, dict string) []byte {
		b := append([]byte(npyMagic), major, 0)
		if major == 1 {
			b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
		} else {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)))
		}
		return append(b, dict...)
	}
	ok := []struct {
		b         []byte
		rows, dim int64
		width     int
	}{
		{appendNPYHeader(nil, 10, 512, 4), 10, 512, 4},
		{appendNPYHeader(nil, 0, 3, 8), 0, 3, 8},
		{hdr(2, "{'shape': (7, 2), 'fortran_order': False, 'descr': '<f8'}\n"), 7, 2, 8},
		{hdr(3, `{"descr": "=f4", "fortran_order": False, "shape": (1,2)}`+"   \n"), 1, 2, 4},
	}
	for _, c := range ok {
		h, err := parseNPYHeader(c.b)
		if err != nil || h.Rows != c.rows || h.Cols != c.dim || h.Width != c.width || h.DataAt != int64(len(c.b)) {
			t.Errorf("%q: %+v, %v", c.b, h, err)
		}
	}
	if n := len(appendNPYHeader(nil, 10, 512, 4)); n%64 != 0 {
		t.Errorf("header of %d bytes, not 64-aligned as NumPy writes", n)
	}
	bad := []struct {
		b    []byte
		want string
	}{
		{[]byte("\x93NUMPX\x01\x00"), "magic"},
		{hdr(4, "{}\n"), "version 4.0"},
		{hdr(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 2), }\n"), `dtype ">f4"`},
		{hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }\n"), "3 dimensions"},
		{hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 2), }\n"), "non-negative integer"},
		{hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), 'descr': '<f4'}\n"), "repeated"},
		{hdr(1, "{'descr': '<f4', 'fortran_order': False}\n"), `no "shape"`},
		{hdr(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (1, 2)}\n"), "want False"},
		{hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), 'x': 1}\n"), "unknown key"},
		{hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2)}"), "newline"},
		{hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2)} x\n"), "newline"},
		{hdr(1, "{'descr': '<f4' 'fortran_order': False, 'shape': (1, 2)}\n"), "want '}'"},
		{hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 99999999999999)}\n"), "out of range"},
		{hdr(1, "{'descr\n"), "unterminated"},
		{append([]byte(npyMagic), 1, 0, 200, 0, '{'), "cut short"},
	}
	for _, c := range bad {
		_, err := parseNPYHeader(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "byte ") {
			t.Errorf("%q: %v, want an error at a byte with %q", c.b, err, c.want)
		}
	}
}

// FuzzNPYHeader: the header parser never panics, never reads past the
// header it was given, and what it accepts describes a header that
// appendNPYHeader writes back with the same shape and width.
func FuzzNPYHeader(f *testing.F) {
	f.Add(appendNPYHeader(nil, 3, 4, 4))
	f.Add(appendNPYHeader(nil, 0, 1, 8))
	f.Add([]byte("\x93NUMPY\x02\x00\x10\x00\x00\x00{'shape': (1,2)}"))
	f.Add([]byte("\x93NUMPY\x01\x00\x3c\x00{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseNPYHeader(b)
		if err != nil {
			return
		}
		if h.DataAt > int64(len(b)) || h.Rows < 0 || h.Cols < 0 || h.Width != 4 && h.Width != 8 {
			t.Fatalf("%q: accepted %+v", b, h)
		}
		again, err := parseNPYHeader(appendNPYHeader(nil, h.Rows, h.Cols, h.Width))
		if err != nil || again.Rows != h.Rows || again.Cols != h.Cols || again.Width != h.Width {
			t.Fatalf("%q: %+v rewritten reads %+v, %v", b, h, again, err)
		}
		if !bytes.HasPrefix(b, []byte(npyMagic)) {
			t.Fatalf("%q accepted without the magic", b)
		}
	})
}

// TestEmbeddingsThirdParty reads files other programs wrote
// (testdata/embeddings, made by gen.py with pyarrow and NumPy; embeddings.parquet
// by the README's five-line snippet): Parquet fixed-size lists of float64
// beside an ignored column, large lists of float32 in row groups of two,
// np.save of float32 and float64; a Fortran-order matrix is refused.
func TestEmbeddingsThirdParty(t *testing.T) {
	items := map[string]int32{"B00007GDFV": 0, "B0000ZE71C": 1}
	want := [][]float32{{0.12, -0.5, 0.33}, {0.7, 0.01, -0.2}}
	for _, f := range []string{"embeddings.parquet", "fixed64.parquet", "large32.parquet", "f32.npy", "f64.npy"} {
		out := filepath.Join(t.TempDir(), "m.arrow")
		st, err := ExtractEmbeddings(context.Background(), filepath.Join("testdata", "embeddings", f), items, 2, 0, out)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if got := readMatrix(t, out); !slices.EqualFunc(got, want, slices.Equal) || st.Kept != 2 {
			t.Errorf("%s: matrix %v (stats %+v), want %v", f, got, st, want)
		}
	}
	_, err := ExtractEmbeddings(context.Background(), filepath.Join("testdata", "embeddings", "fortran.npy"), items, 2, 0, filepath.Join(t.TempDir(), "m.arrow"))
	if !errors.Is(err, ErrEmbeddings) || !strings.Contains(err.Error(), "fortran_order True") {
		t.Errorf("fortran.npy: %v, want a refusal of Fortran order", err)
	}
}

// BenchmarkExtractEmbeddings reads embeddings files of 10,000 rows at
// CLIP's 512 dimensions (20 MB of float32), every row wanted, as a Parquet
// list<float32> table and as a .npy matrix; bytes/s count the values.
func BenchmarkExtractEmbeddings(b *testing.B) {
	const n, dim = 10000, 512
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 1))
	rows := make([]vecRow, n)
	items := map[string]int32{}
	for i := range rows {
		v := make([]float64, dim)
		for j := range v {
			v[j] = float64(float32(rng.NormFloat64()))
		}
		rows[i] = vecRow{asinOf(i), v}
		items[asinOf(i)] = int32(i)
	}
	files := map[string]string{"parquet": filepath.Join(dir, "e.parquet"), "npy": filepath.Join(dir, "e.npy")}
	writeVectors(b, files["parquet"], "asin", arrow.ListOf(arrow.PrimitiveTypes.Float32), rows)
	writeNPY(b, files["npy"], 4, rows, true)
	for _, format := range []string{"parquet", "npy"} {
		b.Run(format, func(b *testing.B) {
			b.SetBytes(n * dim * 4)
			for b.Loop() {
				if _, err := ExtractEmbeddings(context.Background(), files[format], items, n, 0, filepath.Join(dir, "m.arrow")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Issue 37: the id file of a .npy matrix tolerates a byte-order mark and
// blank lines after the last id, and refuses an id with stray whitespace
// saying so; a file whose first bytes contradict its name (.NPY is .npy, a
// .npy.gz is gzip) is refused naming what it is; a Parquet file with a
// damaged page is ErrEmbeddings (exit 3), not a plain failure.
func TestEmbeddingsIDFileAndFormat(t *testing.T) {
	dir := t.TempDir()
	rows := []vecRow{{"A", []float64{1, 2}}, {"B", []float64{3, 4}}}
	want := map[string]int32{"A": 0, "B": 1}
	extract := func(path string) (EmbeddingStats, error) {
		return ExtractEmbeddings(context.Background(), path, want, 2, 0, filepath.Join(dir, "out.arrow"))
	}
	npy := func(name, ids string) string {
		p := filepath.Join(dir, name)
		writeNPY(t, p, 4, rows, false)
		if id, ok := npyIDFile(p); ok {
			must(t, os.WriteFile(id, []byte(ids), 0o644))
		}
		return p
	}
	for _, tc := range []struct{ name, file, ids string }{
		{"byte-order mark", "bom.npy", "\ufeffA\nB\n"},
		{"trailing blank lines", "blank.npy", "A\r\nB\r\n\r\n\n"},
		{"upper-case name", "UPPER.NPY", "A\nB\n"},
	} {
		st, err := extract(npy(tc.file, tc.ids))
		if err != nil || st.Kept != 2 || st.Format != "npy" {
			t.Errorf("%s: kept %d, format %q, %v", tc.name, st.Kept, st.Format, err)
		}
	}
	parquet := filepath.Join(dir, "v.parquet")
	writeVectors(t, parquet, "asin", arrow.ListOf(arrow.PrimitiveTypes.Float32), rows)
	gz := filepath.Join(dir, "v.npy.gz")
	must(t, os.WriteFile(gz, []byte("\x1f\x8b\x08\x00rest"), 0o644))
	misnamed := filepath.Join(dir, "parquet.npy")
	b, err := os.ReadFile(parquet)
	must(t, err)
	must(t, os.WriteFile(misnamed, b, 0o644))
	npyAsParquet := filepath.Join(dir, "matrix.bin")
	nb, err := os.ReadFile(npy("m.npy", "A\nB\n"))
	must(t, err)
	must(t, os.WriteFile(npyAsParquet, nb, 0o644))
	damaged := filepath.Join(dir, "damaged.parquet")
	pf, err := file.OpenParquetFile(parquet, false)
	must(t, err)
	cc, err := pf.MetaData().RowGroup(0).ColumnChunk(2) // the vectors' values
	must(t, err)
	at := cc.DataPageOffset()
	pf.Close()
	for i := at; i < at+24; i++ {
		b[i] = 0xff // the data page's header
	}
	must(t, os.WriteFile(damaged, b, 0o644))
	for _, tc := range []struct{ name, path, want string }{
		{"stray space", npy("space.npy", "A\n B\n"), `space.ids.txt line 2: bad embeddings file: id " B" has leading or trailing whitespace`},
		{"tab", npy("tab.npy", "A\t\nB\n"), `tab.ids.txt line 1: bad embeddings file: id "A\t" has leading or trailing whitespace`},
		{"an id after a blank line", npy("late.npy", "A\nB\n\nC\n"), "late.ids.txt line 4: bad embeddings file: more ids than the 2 rows"},
		{"gzip", gz, "v.npy.gz: bad embeddings file: gzip-compressed"},
		{"parquet named .npy", misnamed, "parquet.npy: bad embeddings file: a Parquet file, named .npy"},
		{"npy not named .npy", npyAsParquet, "matrix.bin: bad embeddings file: a NumPy file; name it *.npy"},
		{"damaged page", damaged, "damaged.parquet"},
	} {
		_, err := extract(tc.path)
		if !errors.Is(err, ErrEmbeddings) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrEmbeddings with %q", tc.name, err, tc.want)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestEmbeddingsIDRule: a Parquet embeddings table's ids are read by the
// items table's rule (catalogue.ID, invalid UTF-8 as U+FFFD), so that the
// padded or Latin-1 id of an item names it in both tables, and an id of
// spaces is empty.
func TestEmbeddingsIDRule(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "e.parquet")
	good := []float64{1, 2}
	writeVectors(t, path, "id", arrow.ListOf(arrow.PrimitiveTypes.Float32), []vecRow{{" A ", good}, {"B\xe9", []float64{3, 4}}, {"   ", good}})
	items := map[string]int32{"A": 0, "B\uFFFD": 1, "C": 2}
	st, err := ExtractEmbeddings(context.Background(), path, items, 3, -1, filepath.Join(dir, "m.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Kept != 2 || st.EmptyIDs != 1 || st.Unknown != 0 {
		t.Errorf("stats %+v, want 2 kept and 1 empty id", st)
	}
}
