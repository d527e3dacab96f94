// Command docgen prints the reference pages that are generated from the
// code, so that no hand-kept copy can drift from it:
//
//	docs/settings.md  the job file's keys and every setting: the field's
//	                  doc comment (its meaning) and its tags (default,
//	                  bounds, cap), as package job collects them
//	docs/tables.md    every Parquet table's columns and their types, from
//	                  package schema's table structs and their comments
//
// Run it from anywhere in the module (make docs-ref, or go generate
// ./cmd/docgen): it rewrites both pages. With -check it writes
// nothing and exits 1 naming each page that differs; TestDocsUpToDate
// does the same in `go test ./...`.
//
// With -screenshot REPORT_HTML it instead renders that report in headless
// Chromium into docs/report.png, the picture README.md shows: `make docs`
// runs the demo afresh and calls it on the run's report/index.html.
package main

//go:generate go run .

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"monomer/internal/browsertest"
)

// A page is one generated file: its path from the module root and what
// prints it.
type page struct {
	path string
	gen  func(root string) ([]byte, error)
}

var pages = []page{
	{"docs/settings.md", settingsPage},
	{"docs/tables.md", tablesPage},
}

// regenerate is the command that rewrites the pages, for messages.
const regenerate = "make docs-ref (go run ./cmd/docgen)"

func main() {
	check := flag.Bool("check", false, "write nothing; exit 1 if a committed page differs from what the code prints")
	shot := flag.String("screenshot", "", "render this report (index.html) into docs/report.png instead")
	flag.Parse()
	err := run(*check)
	if *shot != "" {
		err = screenshot(*shot)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	var stale []error
	for _, p := range pages {
		want, err := p.gen(root)
		if err != nil {
			return fmt.Errorf("%s: %w", p.path, err)
		}
		file := filepath.Join(root, p.path)
		if check {
			if have, _ := os.ReadFile(file); !bytes.Equal(have, want) {
				stale = append(stale, fmt.Errorf("%s is out of date: run %s", p.path, regenerate))
			}
			continue
		}
		if err := os.WriteFile(file, want, 0o644); err != nil {
			return err
		}
	}
	return errors.Join(stale...)
}

// The report's picture: the browser tests' window width, and tall enough
// for the tables and the first plots.
const shotWidth, shotHeight = 1280, 2600

// screenshot renders report (an index.html) into docs/report.png.
func screenshot(report string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	return browsertest.Screenshot(report, filepath.Join(root, "docs", "report.png"), shotWidth, shotHeight)
}

// moduleRoot is the nearest directory at or above the working directory
// that holds go.mod: the generator reads the packages' source from there.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = up
	}
}
