package synth

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"

	"monomer/schema"
)

// The catalogue layout (a job's data.format: catalogue): the world as a
// shop would export it, four tables. items_<name> has every item with its
// category paths, relations_<name> the related lists as named pairs,
// text_<name> every review as a document with its summary, and
// embeddings_<name>.parquet the image records keyed by id (always
// Parquet: the embeddings reader takes no CSV). The relations are named
// as a shop might name them, to show that any name does: also_bought is
// "bought_together", also_viewed "viewed_together", and Amazon's
// bought_together (a prefix of also_bought) "bundle". Pairs whose target
// is in no file (the lists' dangling ASINs) are left out, as a shop's
// database would not hold them and the relations table rejects them.

// CatalogueRelations names the relations WriteCatalogue writes, by the
// graph of the 2014 layout they come from.
var CatalogueRelations = map[string]string{AlsoBought: "bought_together", AlsoViewed: "viewed_together", BoughtTogether: "bundle"}

// FilesCatalogue returns the file names WriteCatalogue creates in dir for
// name: Parquet tables, or CSV ones if asCSV (the embeddings stay
// Parquet).
func FilesCatalogue(dir, name string, asCSV bool) (items, relations, text, embeddings string) {
	ext := ".parquet"
	if asCSV {
		ext = ".csv"
	}
	return filepath.Join(dir, "items_"+name+ext), filepath.Join(dir, "relations_"+name+ext),
		filepath.Join(dir, "text_"+name+ext), filepath.Join(dir, "embeddings_"+name+".parquet")
}

// catalogueChunk is the rows of one chunk of items, in every table.
type catalogueChunk struct {
	items schema.CatalogueItemsCols
	rels  schema.CatalogueRelationsCols
	text  schema.CatalogueTextCols
	pairs [3]int64 // rels' rows of each relation, in names' order
}

// WriteCatalogue writes the world in the catalogue layout (see
// FilesCatalogue) in dir: the items in world order, for each its pairs
// (bought_together, viewed_together, bundle, each list in its order)
// and its reviews, and the embeddings of the image records when the
// world has them. Bytes depend only on the world. The CSV tables hold the
// categories as JSON lists of paths.
func WriteCatalogue(ctx context.Context, dir, name string, w *World, asCSV bool, opts WriteOptions) (WriteStats, error) {
	var st WriteStats
	if name == "" {
		return st, fmt.Errorf("%w: empty data set name", ErrConfig)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	itemsPath, relPath, textPath, embPath := FilesCatalogue(dir, name, asCSV)
	tables := []*catalogueTable{
		{path: itemsPath, header: []string{"id", "title", "brand", "categories"}},
		{path: relPath, header: []string{"src", "dst", "relation"}},
		{path: textPath, header: []string{"id", "summary", "text"}},
	}
	for _, t := range tables {
		if err := t.open(asCSV); err != nil {
			return st, err
		}
		defer t.abort()
	}
	tables[0].pq = newTableWriter[schema.CatalogueItemsCols]
	tables[1].pq = newTableWriter[schema.CatalogueRelationsCols]
	tables[2].pq = newTableWriter[schema.CatalogueTextCols]
	for _, t := range tables {
		if !asCSV {
			if err := t.startParquet(); err != nil {
				return st, err
			}
		}
	}
	const itemChunk = 256
	names := [3]string{CatalogueRelations[AlsoBought], CatalogueRelations[AlsoViewed], CatalogueRelations[BoughtTogether]}
	err := ordered(ctx, (len(w.Items)+itemChunk-1)/itemChunk, workers,
		func(ci int, s *stream) catalogueChunk {
			var c catalogueChunk
			for i := ci * itemChunk; i < min(len(w.Items), (ci+1)*itemChunk); i++ {
				if w.Gone(i) { // removed on day 2
					continue
				}
				m := w.meta(s, i)
				c.items.ID, c.items.Title, c.items.Brand = append(c.items.ID, m.ASIN), append(c.items.Title, m.Title), append(c.items.Brand, m.Brand)
				c.items.Categories = append(c.items.Categories, m.Categories)
				for g, gi := range []int{gAB, gAV, gBT} {
					for _, y := range w.related(s, i, gi) {
						if int(y) < len(w.Items) && !w.Gone(int(y)) {
							c.rels.Src, c.rels.Dst = append(c.rels.Src, m.ASIN), append(c.rels.Dst, w.Items[y].ASIN)
							c.rels.Relation = append(c.rels.Relation, names[g])
							c.pairs[g]++
						}
					}
				}
				for _, rv := range w.Reviews(i) {
					c.text.ID, c.text.Summary, c.text.Text = append(c.text.ID, rv.ASIN), append(c.text.Summary, rv.Summary), append(c.text.Text, rv.ReviewText)
				}
			}
			return c
		},
		func(c catalogueChunk) error {
			if err := tables[0].add(c.items, len(c.items.ID), func(k int) []string {
				cats, _ := json.Marshal(c.items.Categories[k])
				return []string{c.items.ID[k], c.items.Title[k], c.items.Brand[k], string(cats)}
			}); err != nil {
				return err
			}
			if err := tables[1].add(c.rels, len(c.rels.Src), func(k int) []string {
				return []string{c.rels.Src[k], c.rels.Dst[k], c.rels.Relation[k]}
			}); err != nil {
				return err
			}
			if err := tables[2].add(c.text, len(c.text.ID), func(k int) []string {
				return []string{c.text.ID[k], c.text.Summary[k], c.text.Text[k]}
			}); err != nil {
				return err
			}
			st.MetaLines += int64(len(c.items.ID))
			st.Relations += int64(len(c.rels.Src))
			st.AlsoBought += c.pairs[0]
			st.AlsoViewed += c.pairs[1]
			st.BoughtTogether += c.pairs[2]
			st.ReviewLines += int64(len(c.text.ID))
			if opts.Progress != nil {
				opts.Progress(st.MetaLines, int64(len(w.Items)))
			}
			return nil
		})
	if err != nil {
		return st, err
	}
	sizes := []*int64{&st.MetaBytes, &st.RelationBytes, &st.ReviewBytes}
	files := make([]*atomicFile, 0, len(tables)+1)
	for k, t := range tables {
		n, err := t.finish()
		if err != nil {
			return st, err
		}
		*sizes[k] = n
		files = append(files, t.a)
	}
	if len(w.records) > 0 {
		ef, err := createAtomic(embPath, false) // for its temporary name and commit
		if err != nil {
			return st, err
		}
		defer ef.abort()
		st.Records, err = writeVectorTable(ctx, w, ef.tmp.Name(), func(b *schema.CatalogueEmbeddingsCols, id string, vec []float32) {
			b.ID, b.Embedding = append(b.ID, id), append(b.Embedding, vec)
		})
		if err != nil {
			return st, err
		}
		if st.FeatureBytes, err = ef.finish(); err != nil {
			return st, err
		}
		files = append(files, ef)
	}
	return st, commitAll(files...) // all or none, as the other formats
}

// catalogueTable is one table WriteCatalogue writes, as CSV through an
// atomicFile or as Parquet through a schema writer at the atomicFile's
// temporary name.
type catalogueTable struct {
	path   string
	header []string
	a      *atomicFile
	csv    *csv.Writer
	pq     func(path string) (tableWriter, error)
	w      tableWriter
}

// tableWriter is a schema.Writer of any table.
type tableWriter interface {
	append(cols any) error
	Close() (int64, error)
}

type typedWriter[T any] struct{ *schema.Writer[T] }

func (t typedWriter[T]) append(cols any) error { return t.Append(cols.(T)) }

func newTableWriter[T any](path string) (tableWriter, error) {
	w, err := schema.NewWriter[T](path, embeddingGroupRows)
	if err != nil {
		return nil, err
	}
	return typedWriter[T]{w}, nil
}

func (t *catalogueTable) open(asCSV bool) error {
	a, err := createAtomic(t.path, false)
	if err != nil {
		return err
	}
	t.a = a
	if asCSV {
		t.csv = csv.NewWriter(a)
		return t.csv.Write(t.header)
	}
	return nil
}

func (t *catalogueTable) startParquet() error {
	w, err := t.pq(t.a.tmp.Name())
	t.w = w
	return err
}

// add writes n rows: cols to Parquet, or row(k) for each to CSV.
func (t *catalogueTable) add(cols any, n int, row func(k int) []string) error {
	if t.w != nil {
		return t.w.append(cols)
	}
	for k := range n {
		if err := t.csv.Write(row(k)); err != nil {
			return err
		}
	}
	return nil
}

// finish completes the table under its temporary name; commitAll renames
// it into place.
func (t *catalogueTable) finish() (int64, error) {
	if t.w != nil {
		if _, err := t.w.Close(); err != nil {
			return 0, err
		}
	} else {
		t.csv.Flush()
		if err := t.csv.Error(); err != nil {
			return 0, err
		}
	}
	return t.a.finish()
}

func (t *catalogueTable) abort() {
	if t.a != nil {
		t.a.abort()
	}
}
