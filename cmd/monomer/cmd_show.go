package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/spf13/cobra"

	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

type showFlags struct {
	rows   int64
	format string
}

func newShowCommand() *cobra.Command {
	var flags showFlags
	cmd := &cobra.Command{
		Use:   "show TABLE.parquet [--rows N] [--format text|csv|json]",
		Short: "Print a Parquet table's columns and first rows",
		Long: `show prints a Parquet table, a run's or any other: with --format text (the
default) a line "TABLE: R rows, C columns", the columns' names and types,
and the first --rows rows aligned (each 1,024 rows apart, so that every
row is not held in memory), cells as diff prints them (strings quoted,
lists cut at 200 characters); with csv, a header line and the rows; with
json, one JSON object a row, keys in column order (Arrow's encoding).
--rows -1 prints every row. Only the row groups holding the rows printed
are read, so the head of a large table is quick; a page whose checksum
does not match is refused. A column of a type monomer does not read (a
duration) is printed as its stored values. A file that is not a readable
Parquet table, or a symbolic link loop, exits 3; a path that is not a
regular file (a directory, a named pipe, a device) exits 2 before it is
opened.

` + exitCodesHelp,
		Example: `  monomer show runs/demo/men-also_bought-image/evaluate/metrics.parquet
  monomer show runs/demo/men-also_bought-image/evaluate/predictions.parquet --rows 5 --format csv`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if flags.rows < -1 {
				return fmt.Errorf("%w: --rows %d: a count, or -1 for every row", pipeline.ErrUsage, flags.rows)
			}
			path := args[0]
			switch fi, err := os.Stat(path); {
			case errors.Is(err, fs.ErrNotExist):
				return fmt.Errorf("%w: show: %s: no such file", pipeline.ErrUsage, path)
			case errors.Is(err, syscall.ELOOP):
				// As run classes one: a data folder in need of repair.
				return fmt.Errorf("%w: show: %s is a symbolic link loop", pipeline.ErrBadInput, path)
			case err != nil:
				return fmt.Errorf("%w: show: %v", pipeline.ErrUsage, err)
			case fi.IsDir():
				return fmt.Errorf("%w: show: %s is a directory; give one of its .parquet files", pipeline.ErrUsage, path)
			case !fi.Mode().IsRegular():
				// Opening a named pipe blocks until a writer comes, and a
				// device may never end: neither is a table, whatever it holds.
				nr := cache.NotRegularError{Path: path, Mode: fi.Mode()}
				return fmt.Errorf("%w: show: %v", pipeline.ErrUsage, &nr)
			}
			w := cmd.OutOrStdout()
			var out tableOut
			switch flags.format {
			case "text":
				out = &textOut{path: path, w: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
			case "csv":
				out = &csvOut{w: csv.NewWriter(w)}
			case "json":
				out = &jsonOut{w: w}
			default:
				return fmt.Errorf("%w: --format %q: text, csv or json", pipeline.ErrUsage, flags.format)
			}
			var werr error // the output's own, kept apart from the table's
			err := schema.Head(cmd.Context(), path, flags.rows,
				func(rows int64, sc *arrow.Schema) error { werr = out.header(rows, sc); return werr },
				func(rec arrow.RecordBatch) error { werr = out.batch(rec); return werr })
			switch {
			case werr != nil:
				return werr
			case errors.Is(err, context.Canceled):
				return err // interrupted: exit 130
			case err != nil:
				// Not a readable table: the same on a retry.
				return fmt.Errorf("%w: %v", pipeline.ErrBadInput, err)
			}
			return out.end()
		},
	}
	flags.rows = 10
	cmd.Flags().Var((*rowsFlag)(&flags.rows), "rows", "rows to print from the first (-1: all)")
	cmd.Flags().StringVar(&flags.format, "format", "text", "text, csv or json")
	return cmd
}

// tableOut writes a table in one format: its header, its batches, the end.
type tableOut interface {
	header(rows int64, sc *arrow.Schema) error
	batch(rec arrow.RecordBatch) error
	end() error
}

// textOut aligns the columns of each batch (the header's with the
// first): tabwriter holds what it aligns, so every row of a large table
// would otherwise be held until the end.
type textOut struct {
	path string
	w    *tabwriter.Writer
}

func (o *textOut) header(rows int64, sc *arrow.Schema) error {
	names, types := make([]string, sc.NumFields()), make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		names[i], types[i] = textEscape.Replace(f.Name), textEscape.Replace(f.Type.String())
	}
	_, err := fmt.Fprintf(o.w, "%s: %d rows, %d columns\n%s\n%s\n", o.path, rows, sc.NumFields(), strings.Join(names, "\t"), strings.Join(types, "\t"))
	return err
}

func (o *textOut) batch(rec arrow.RecordBatch) error {
	cells := make([]string, rec.NumCols())
	for r := range int(rec.NumRows()) {
		for c := range cells {
			cells[c] = schema.CellText(rec.Column(c), r)
		}
		if _, err := fmt.Fprintln(o.w, strings.Join(cells, "\t")); err != nil {
			return err
		}
	}
	return o.w.Flush()
}

// textEscape writes the characters that would break the text layout's
// lines and columns (in a column's name: cells are quoted) as Go escapes.
var textEscape = strings.NewReplacer("\t", `\t`, "\n", `\n`, "\r", `\r`, "\v", `\v`, "\f", `\f`)

func (o *textOut) end() error { return o.w.Flush() }

type csvOut struct{ w *csv.Writer }

func (o *csvOut) header(_ int64, sc *arrow.Schema) error {
	names := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		names[i] = f.Name
	}
	return o.w.Write(names)
}

func (o *csvOut) batch(rec arrow.RecordBatch) error {
	cells := make([]string, rec.NumCols())
	for r := range int(rec.NumRows()) {
		for c := range cells {
			cells[c] = schema.CellRaw(rec.Column(c), r)
		}
		if err := o.w.Write(cells); err != nil {
			return err
		}
	}
	return nil
}

func (o *csvOut) end() error { o.w.Flush(); return o.w.Error() }

// jsonOut writes a JSON object a row, its keys in column order (arrow-go's
// RecordToJSON builds a map: keys sorted, two columns of one name one
// key), each value as arrow-go marshals it (NaN and infinities as
// strings).
type jsonOut struct {
	w    io.Writer
	keys [][]byte
	line []byte
}

func (o *jsonOut) header(_ int64, sc *arrow.Schema) error {
	o.keys = o.keys[:0]
	for _, f := range sc.Fields() {
		k, err := json.Marshal(f.Name)
		if err != nil {
			return err
		}
		o.keys = append(o.keys, k)
	}
	return nil
}

func (o *jsonOut) batch(rec arrow.RecordBatch) error {
	for r := range int(rec.NumRows()) {
		o.line = append(o.line[:0], '{')
		for c, k := range o.keys {
			v, err := json.Marshal(rec.Column(c).GetOneForMarshal(r))
			if err != nil {
				return fmt.Errorf("show: row %d column %s: %w", r, rec.ColumnName(c), err)
			}
			if c > 0 {
				o.line = append(o.line, ',')
			}
			o.line = append(append(append(o.line, k...), ':'), v...)
		}
		o.line = append(o.line, '}', '\n')
		if _, err := o.w.Write(o.line); err != nil {
			return err
		}
	}
	return nil
}

func (o *jsonOut) end() error { return nil }

// rowsFlag is --rows: a count in decimal (pflag's int64 also takes 0x10
// and 0o20), or -1.
type rowsFlag int64

func (f *rowsFlag) String() string { return strconv.FormatInt(int64(*f), 10) }
func (f *rowsFlag) Type() string   { return "int" }
func (f *rowsFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a whole number in decimal", s)
	}
	*f = rowsFlag(n)
	return nil
}
