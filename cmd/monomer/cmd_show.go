package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/spf13/cobra"

	"monomer/pipeline"
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
and the first --rows rows aligned, cells as diff prints them (strings
quoted, lists cut at 200 characters); with csv, a header line and the rows;
with json, one JSON object a row (Arrow's encoding). --rows -1 prints every
row. Only the row groups holding the rows printed are read, so the head of
a large table is quick. A file that is not a readable Parquet table exits 3.

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
			case err != nil:
				return fmt.Errorf("%w: show: %v", pipeline.ErrUsage, err)
			case fi.IsDir():
				return fmt.Errorf("%w: show: %s is a directory; give one of its .parquet files", pipeline.ErrUsage, path)
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
	cmd.Flags().Int64Var(&flags.rows, "rows", 10, "rows to print from the first (-1: all)")
	cmd.Flags().StringVar(&flags.format, "format", "text", "text, csv or json")
	return cmd
}

// tableOut writes a table in one format: its header, its batches, the end.
type tableOut interface {
	header(rows int64, sc *arrow.Schema) error
	batch(rec arrow.RecordBatch) error
	end() error
}

// textOut aligns the columns (tabwriter holds the rows until end).
type textOut struct {
	path string
	w    *tabwriter.Writer
}

func (o *textOut) header(rows int64, sc *arrow.Schema) error {
	names, types := make([]string, sc.NumFields()), make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		names[i], types[i] = f.Name, f.Type.String()
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
	return nil
}

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

type jsonOut struct{ w io.Writer }

func (o *jsonOut) header(int64, *arrow.Schema) error { return nil }
func (o *jsonOut) batch(rec arrow.RecordBatch) error { return array.RecordToJSON(rec, o.w) }
func (o *jsonOut) end() error                        { return nil }
