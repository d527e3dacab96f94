package catalogue

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"monomer/amazon"
	"monomer/internal/rawio"
	"monomer/schema"
)

// ErrTable marks a file the readers cannot read as a table: unreadable, a
// required column missing, a column of a type they do not take, a CSV
// file without a header.
var ErrTable = errors.New("catalogue: not a usable table")

// errCorrupt marks a damaged gzip stream (wrapped with ErrTable).
var errCorrupt = errors.New("corrupt or truncated gzip stream")

// Stats counts what a reader saw in one file: every row is one of
// Records, Rejected, Duplicates or Skipped.
type Stats struct {
	// Format is "parquet", "csv" or "csv.gz".
	Format     string
	Rows       int64 // data rows read (a CSV header is not one)
	Records    int64 // rows handed to the caller
	Rejected   int64 // rows handed to reject
	Duplicates int64 // items: exact repeats of an earlier row's item, skipped
	Skipped    int64 // relations: rows of a relation the caller did not ask for
	// InvalidUTF8 counts the rows holding invalid UTF-8 (a Latin-1 byte),
	// each run of it read as one U+FFFD as the Amazon readers read it.
	InvalidUTF8 int64 `json:",omitempty"`
	// Reasons counts the rejects by kind ("missing id", "bad row", ...),
	// each Reject's Err.
	Reasons map[string]int64 `json:",omitempty"`
	// Relations counts the valid rows of each relation name (relations
	// only), so that a caller can list the names a table holds.
	Relations map[string]int64 `json:",omitempty"`
}

// column is one column a reader asks for.
type column struct {
	name     string
	required bool
	nested   bool // may be a list or a list of lists (categories)
}

// cell is one cell of a row; a CSV cell is always text.
type cell struct {
	kind   schema.CellKind // NoCells: the file has no such column
	text   string
	list   []string
	nested [][]string
}

// row is one data row of a table, its cells in the order the columns were
// asked for.
type row struct {
	line   int64 // CSV: line of the record's start (the header is line 1); Parquet: row, from 1
	offset int64 // CSV: byte offset of the record's start; Parquet: -1
	cells  []cell
	raw    []string // CSV: the record's fields, for the excerpt
}

// reject builds the Reject of r in file base with reason why.
func (r *row) reject(base, why string) amazon.Reject {
	var ex string
	if r.offset >= 0 { // a CSV record
		ex = excerpt(strings.Join(r.raw, ","))
	} else {
		var parts []string
		for _, c := range r.cells {
			switch c.kind {
			case schema.TextCells:
				parts = append(parts, c.text)
			case schema.ListCells:
				parts = append(parts, fmt.Sprint(c.list))
			case schema.NestedCells:
				parts = append(parts, fmt.Sprint(c.nested))
			}
		}
		ex = excerpt(strings.Join(parts, ","))
	}
	return amazon.Reject{File: base, Line: r.line, Offset: r.offset, Err: why, Excerpt: ex}
}

// excerpt is the first 200 bytes of s, cut back to a character boundary,
// as valid UTF-8 (as amazon's rejects are).
func excerpt(s string) string {
	const n = 200
	if len(s) > n {
		cut := n
		for cut > n-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// fixUTF8 replaces each run of invalid UTF-8 in the cells' strings by one
// U+FFFD, as the Amazon readers treat raw bytes that are not UTF-8
// (amazon/scan.go, str), and reports whether it replaced any. Arrow's
// string type must hold UTF-8: a Latin-1 byte taken as it is would be
// written into every table downstream, which pyarrow's full validation
// then refuses. A list is copied before it is changed: its strings belong
// to the reader's batch.
func fixUTF8(cells []cell) bool {
	fixed := false
	list := func(l []string) []string {
		k := slices.IndexFunc(l, func(s string) bool { return !utf8.ValidString(s) })
		if k < 0 {
			return l
		}
		fixed = true
		l = slices.Clone(l)
		for ; k < len(l); k++ {
			l[k] = strings.ToValidUTF8(l[k], "\uFFFD")
		}
		return l
	}
	for k := range cells {
		c := &cells[k]
		if !utf8.ValidString(c.text) {
			fixed = true
			c.text = strings.ToValidUTF8(c.text, "\uFFFD")
		}
		c.list = list(c.list)
		cloned := false
		for i, p := range c.nested {
			q := list(p)
			if len(q) == 0 || &q[0] == &p[0] {
				continue
			}
			if !cloned {
				c.nested, cloned = slices.Clone(c.nested), true
			}
			c.nested[i] = q
		}
	}
	return fixed
}

// readRows reads the columns cols of the table at path, in file order,
// calling fn with each data row (reused by the next call), and badRow with
// each CSV record that is not a row (a quote error, a wrong number of
// fields). It sets st.Format and st.Rows.
func readRows(ctx context.Context, path string, cols []column, st *Stats, fn func(*row) error, badRow func(*row, string)) error {
	base := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return err // names the path; a missing file is the caller's to class
	}
	var magic [4]byte
	n, _ := io.ReadFull(f, magic[:])
	f.Close()
	if n == 4 && string(magic[:]) == "PAR1" {
		st.Format = "parquet"
		return readParquet(ctx, path, base, cols, st, fn)
	}
	st.Format = "csv"
	if rawio.IsGzip(magic[:n]) {
		st.Format = "csv.gz"
	}
	return readCSV(ctx, path, base, cols, st, fn, badRow)
}

func readParquet(ctx context.Context, path, base string, cols []column, st *Stats, fn func(*row) error) error {
	names := make([]string, len(cols))
	for k, c := range cols {
		names[k] = c.name
	}
	r := &row{cells: make([]cell, len(cols)), offset: -1}
	_, err := schema.ReadCells(ctx, path, names, func(b *schema.CellBatch) error {
		for i := range b.Rows {
			st.Rows++
			r.line = b.Row + int64(i) + 1
			for k := range cols {
				c := &b.Cols[k]
				x := cell{kind: c.Kind}
				switch c.Kind {
				case schema.TextCells:
					x.text = c.Text[i]
				case schema.ListCells:
					x.list = c.List[i]
				case schema.NestedCells:
					x.nested = c.Nested[i]
				}
				r.cells[k] = x
			}
			if fixUTF8(r.cells) {
				st.InvalidUTF8++
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}, func(kinds []schema.CellKind) error { return checkKinds(path, cols, kinds) })
	if errors.Is(err, schema.ErrCells) {
		return fmt.Errorf("%w: %w", ErrTable, err)
	}
	return err
}

// checkKinds checks that the required columns are there (a missing one's
// error lists those the file has, as CSV's lists the header) and that
// only a nested column holds lists.
func checkKinds(path string, cols []column, kinds []schema.CellKind) error {
	base := filepath.Base(path)
	for k, c := range cols {
		switch kind := kinds[k]; {
		case kind == schema.NoCells && c.required:
			have, err := schema.Columns(path)
			if err != nil {
				return fmt.Errorf("%w: %s: no column %s", ErrTable, base, c.name)
			}
			return fmt.Errorf("%w: %s: no column %s among its columns (%s)", ErrTable, base, c.name, strings.Join(have, ", "))
		case kind != schema.NoCells && kind != schema.TextCells && !c.nested:
			return fmt.Errorf("%w: %s: column %s holds lists, want strings", ErrTable, base, c.name)
		}
	}
	return nil
}

func readCSV(ctx context.Context, path, base string, cols []column, st *Stats, fn func(*row) error, badRow func(*row, string)) error {
	rd, err := rawio.Open(path, errCorrupt)
	var ce *rawio.CorruptError
	switch {
	case errors.As(err, &ce):
		return fmt.Errorf("%w: %s: %w", ErrTable, base, err)
	case err != nil:
		return err
	}
	defer rd.Close()
	br := bufio.NewReaderSize(rd, 256<<10)
	if head, _ := br.Peek(4); string(head) == "PAR1" {
		return fmt.Errorf("%w: %s: a gzip-compressed Parquet file; write it uncompressed (Parquet compresses its own pages)", ErrTable, base)
	}
	if err := checkEncoding(br, base); err != nil {
		return err
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return fmt.Errorf("%w: %s: empty file, want a header row naming the columns", ErrTable, base)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: header: %w", ErrTable, base, err)
	}
	at := make([]int, len(cols)) // the field of each column, -1 if none
	var seen []string
	for k, c := range cols {
		at[k] = -1
		for i, h := range header {
			if i == 0 {
				h = strings.TrimPrefix(h, "\uFEFF") // a byte-order mark Excel writes
			}
			if strings.TrimSpace(h) != c.name {
				continue
			}
			if at[k] >= 0 {
				return fmt.Errorf("%w: %s: two columns named %s; keep one", ErrTable, base, c.name)
			}
			at[k] = i
		}
		if at[k] < 0 && c.required {
			for _, h := range header {
				seen = append(seen, strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF")))
			}
			return fmt.Errorf("%w: %s: no column %s in the header (%s)", ErrTable, base, c.name, strings.Join(seen, ", "))
		}
	}
	cr.FieldsPerRecord = len(header)
	r := &row{cells: make([]cell, len(cols))}
	for {
		if st.Rows%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		off := cr.InputOffset()
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		r.offset, r.raw = off, rec
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			if errors.Is(pe.Err, csv.ErrQuote) && pe.Line > pe.StartLine {
				_, next := cr.Read()
				return spannedQuote(base, pe, next == io.EOF)
			}
			st.Rows++
			r.line = int64(pe.StartLine)
			clear(r.cells)
			if errors.Is(pe.Err, csv.ErrFieldCount) {
				// The fields are there, only too few or too many: the
				// reject can still name the row's id (a truncated last
				// row of an items table), so that the rows naming it
				// elsewhere are counted under it.
				for k, i := range at {
					if i >= 0 && i < len(rec) {
						r.cells[k] = cell{kind: schema.TextCells, text: strings.ToValidUTF8(rec[i], "\uFFFD")}
					}
				}
			}
			badRow(r, "bad row: "+pe.Err.Error())
			continue
		}
		if err != nil {
			if errors.As(err, &ce) {
				return fmt.Errorf("%w: %s: corrupt or truncated gzip stream after %d rows: %w", ErrTable, base, st.Rows, ce.Err)
			}
			return fmt.Errorf("%w: %s after %d rows: %w", ErrTable, base, st.Rows, err)
		}
		st.Rows++
		line, _ := cr.FieldPos(0)
		r.line = int64(line)
		for k, i := range at {
			if i < 0 {
				r.cells[k] = cell{}
				continue
			}
			r.cells[k] = cell{kind: schema.TextCells, text: rec[i]}
		}
		if fixUTF8(r.cells) {
			st.InvalidUTF8++
		}
		if err := fn(r); err != nil {
			return err
		}
	}
}

// checkEncoding refuses the two CSV files encoding/csv misreads with a
// message about something else: UTF-16 (Excel's "Unicode text"; its NUL
// bytes would be echoed in a header error) and CR-only line endings (old
// Mac files: the whole file is one line, then a quote error).
func checkEncoding(br *bufio.Reader, base string) error {
	head, _ := br.Peek(64 << 10)
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) ||
		(len(head) >= 2 && (head[0] == 0 || head[1] == 0)) {
		return fmt.Errorf("%w: %s: UTF-16 text (a byte-order mark or NUL bytes in the header); save the table as UTF-8 CSV", ErrTable, base)
	}
	if bytes.IndexByte(head, '\n') < 0 && bytes.IndexByte(head, '\r') >= 0 {
		return fmt.Errorf("%w: %s: lines end with a carriage return alone (CR, old Mac line endings) in its first %d bytes; save it with LF or CR LF line endings", ErrTable, base, len(head))
	}
	return nil
}

// spannedQuote is the error of a quote error in a record that runs over
// several lines (pe.StartLine to pe.Line): a quoted field left open, or
// closed by a stray quote further down. The reader read every line up to
// the next quote as part of that one field, so the rows among them are
// neither records nor rejects; a reject counting one row for them would
// let a large table lose them under reject_ratio unseen. A multi-line
// field is legitimate, so only a quote error fails the file; a record on
// one line with a quote error ends at its line and is a bad row.
func spannedQuote(base string, pe *csv.ParseError, toEOF bool) error {
	end := fmt.Sprintf("runs to a stray quote at line %d, column %d", pe.Line, pe.Column)
	if toEOF {
		end = "is never closed"
	}
	return fmt.Errorf(`%w: %s: unclosed quote: a quoted field of the row at line %d %s, so lines %d..%d were read as one cell and the rows among them cannot be counted; close the quote, or double each quote inside a quoted field ("")`,
		ErrTable, base, pe.StartLine, end, pe.StartLine, pe.Line)
}
