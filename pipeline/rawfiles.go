package pipeline

import (
	"os"

	"monomer/pipeline/cache"
)

// rawFilesThere checks that every raw input file of the selected nodes is
// there and a regular file, before anything runs: a features stage's
// embeddings file (or a later stage's file of any kind) missing or a named
// pipe was found only once ingest had run, an hour into a large run. The
// error is the one hashing the file gives (inputFileError): exit 5 for a
// file still to arrive, 2 for a path that can never be a data file. The
// files are only looked at, not read: a node's key reads them later.
func rawFilesThere(g *Graph, sel map[*Node]bool) error {
	for _, n := range g.Nodes {
		if !sel[n] {
			continue
		}
		_, files := n.Work.Key()
		for _, f := range files {
			if err := regularFile(f); err != nil {
				return inputFileError(n.ID, f, err)
			}
		}
	}
	return nil
}

// regularFile is nil for a regular file (after links), else the error
// cache.HashCache.File would give for f.
func regularFile(f string) error {
	fi, err := os.Stat(f)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &cache.NotRegularError{Path: f, Mode: fi.Mode()}
	}
	return nil
}
