package synth

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"

	"monomer/schema"
)

// The 2023 layout ("Amazon Reviews 2023"): meta_<name>.jsonl.gz and
// <name>.jsonl.gz, items keyed by parent_asin, no also_buy or also_view
// (bought_together null), reviews with user_id and a timestamp in
// milliseconds. There are no image files either, so the image features go
// to an embeddings table, embeddings_<name>.parquet, as a user would bring
// them (schema.EmbeddingsCols: parent_asin, embedding list<float32>).
//
// With no relation in the metadata, the planted also_bought relation is
// written into the reviews, the only place co_review can find it: each
// planted edge x → y gets 1 + Poisson(SessionBuyersMean) buyers of their
// own, each reviewing x at a uniform time and y a delay later (SessionGap
// to SessionGap + SessionSpread), so y's review follows x's as "bought x,
// then y". Every item also keeps its reviews of the 2014 layout (World.Reviews:
// the same texts and ratings), by the world's reviewers at their days, a
// uniform millisecond into the day: the background in which a co_review
// window finds chance pairs.

// Parameters of the planted buying sessions.
const (
	// SessionBuyersMean is the Poisson mean of an edge's buyers beyond
	// the first: an edge has 1 + Poisson(2) buyers, so with co_review's
	// default of two users, an edge with one buyer only (e^-2 ≈ 13.5 %)
	// is out of reach: the recall the relation can have.
	SessionBuyersMean = 2.0
	// maxSessionBuyers caps an edge's buyers (their ids number them).
	maxSessionBuyers = 64
)

var (
	// session2023Start and session2023Days span the 2023 release's
	// review times that sessions are drawn from.
	session2023Start = time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	session2023Days  = int64(time.Date(2023, 9, 1, 0, 0, 0, 0, time.UTC).Sub(time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)).Hours() / 24)
	// SessionGap and SessionSpread: the second review of a session comes
	// one hour to 21 days after the first, inside co_review's default
	// 30-day window, never at the same millisecond (which would relate
	// the items both ways).
	SessionGap    = time.Hour
	SessionSpread = 21 * 24 * time.Hour
)

// Files2023 returns the file names Write2023 creates in dir for name.
func Files2023(dir, name string) (meta, reviews, embeddings string) {
	return filepath.Join(dir, "meta_"+name+".jsonl.gz"),
		filepath.Join(dir, name+".jsonl.gz"),
		filepath.Join(dir, "embeddings_"+name+".parquet")
}

// session is one planted buyer of an edge x → y.
type session struct {
	user   string
	tx, ty int64 // milliseconds
}

// sessions returns the buyers of also_bought edge e (an index into
// Edges(AlsoBought)); the same for every caller.
func (w *World) sessions(s *stream, e int) []session {
	r := s.reset(w.seed, purposeSession, e).Rand
	k := min(maxSessionBuyers, 1+poisson(r, SessionBuyersMean))
	out := make([]session, k)
	for b := range out {
		tx := session2023Start + r.Int64N(session2023Days*86400000)
		ty := tx + SessionGap.Milliseconds() + r.Int64N(SessionSpread.Milliseconds())
		out[b] = session{user: sessionUser(e, b), tx: tx, ty: ty}
	}
	return out
}

// sessionUser is a 2023-style user id ("AG" and 26 upper-case base-36
// characters) unique to (edge, buyer); background reviewers' ids start
// "AF", so the two never meet.
func sessionUser(e, b int) string {
	v := uint64(e)*maxSessionBuyers + uint64(b)
	return "AG" + base36(mix(v)%pow36[12], 12) + base36(v%pow36[12], 12) + "00"
}

// Write2023 writes the world in the 2023 layout (see Files2023) in dir:
// the metadata of every item, its reviews and the planted sessions' (see
// above), and, when the world has image records, the embeddings table of
// them in the .b file's record order (orphans included, as ids that are in
// no metadata). Bytes depend only on the world.
func Write2023(ctx context.Context, dir, name string, w *World, opts WriteOptions) (WriteStats, error) {
	var st WriteStats
	if name == "" {
		return st, fmt.Errorf("%w: empty data set name", ErrConfig)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	metaPath, reviewPath, embPath := Files2023(dir, name)
	ab := w.Edges(AlsoBought)
	// The planted edges into each item, by edge index, so that an item's
	// reviews (written with the item) include the second half of its
	// sessions.
	inStart := make([]int32, len(w.Items)+1)
	for _, e := range ab {
		inStart[e.Dst+1]++
	}
	for i := 1; i < len(inStart); i++ {
		inStart[i] += inStart[i-1]
	}
	inEdge := make([]int32, len(ab))
	fill := append([]int32(nil), inStart[:len(w.Items)]...)
	for k, e := range ab {
		inEdge[fill[e.Dst]] = int32(k)
		fill[e.Dst]++
	}

	mf, err := createAtomic(metaPath, true)
	if err != nil {
		return st, err
	}
	defer mf.abort()
	rf, err := createAtomic(reviewPath, true)
	if err != nil {
		return st, err
	}
	defer rf.abort()
	const itemChunk = 256
	type textChunk struct {
		meta, reviews   []byte
		items, nReviews int64
	}
	err = ordered(ctx, (len(w.Items)+itemChunk-1)/itemChunk, workers,
		func(ci int, s *stream) textChunk {
			var c textChunk
			ss := newStream()
			for i := ci * itemChunk; i < min(len(w.Items), (ci+1)*itemChunk); i++ {
				if w.Gone(i) { // removed on day 2
					continue
				}
				m := w.meta(s, i)
				rs := w.Reviews(i)
				c.meta = w.appendMeta2023(c.meta, i, &m, rs)
				r := s.reset(w.seed, purposeSession2023, i).Rand
				for _, rv := range rs {
					ms := rv.UnixReviewTime*1000 + r.Int64N(86400000)
					c.reviews = appendReview2023(c.reviews, &rv, "AF"+rv.ReviewerID[1:], ms)
					c.nReviews++
				}
				// Session reviews reuse the item's texts (or a line of
				// filler for an item without reviews).
				text := func(b int) Review {
					if len(rs) == 0 {
						return Review{ASIN: w.Items[i].ASIN, Overall: 5, Summary: "Goes well with the rest", ReviewText: "Bought it with something else."}
					}
					return rs[b%len(rs)]
				}
				for k := w.edgeStart[gAB][i]; k < w.edgeStart[gAB][i+1]; k++ {
					for b, se := range w.sessions(ss, int(k)) {
						rv := text(int(k) + b)
						c.reviews = appendReview2023(c.reviews, &rv, se.user, se.tx)
						c.nReviews++
					}
				}
				for _, k := range inEdge[inStart[i]:inStart[i+1]] {
					for b, se := range w.sessions(ss, int(k)) {
						rv := text(int(k) + b + 1)
						c.reviews = appendReview2023(c.reviews, &rv, se.user, se.ty)
						c.nReviews++
					}
				}
				c.items++
			}
			return c
		},
		func(c textChunk) error {
			if _, err := mf.Write(c.meta); err != nil {
				return err
			}
			if _, err := rf.Write(c.reviews); err != nil {
				return err
			}
			st.MetaLines += c.items
			st.ReviewLines += c.nReviews
			st.MetaRaw += int64(len(c.meta))
			st.ReviewRaw += int64(len(c.reviews))
			if opts.Progress != nil {
				opts.Progress(st.MetaLines, int64(len(w.Items)))
			}
			return nil
		})
	if err != nil {
		return st, err
	}
	if st.MetaBytes, err = mf.finish(); err != nil {
		return st, err
	}
	if st.ReviewBytes, err = rf.finish(); err != nil {
		return st, err
	}
	if len(w.records) == 0 {
		return st, commitAll(mf, rf)
	}
	ef, err := createAtomic(embPath, false) // for its temporary name and commit
	if err != nil {
		return st, err
	}
	defer ef.abort()
	if st.Records, err = w.writeEmbeddings(ctx, ef.tmp.Name()); err != nil {
		return st, err
	}
	if st.FeatureBytes, err = ef.finish(); err != nil {
		return st, err
	}
	return st, commitAll(mf, rf, ef)
}

// embeddingGroupRows is the embeddings table's row-group length at
// dimensions up to 4096 (FC7's).
const embeddingGroupRows = 4096

// groupRows is the row-group length at dimension f: embeddingGroupRows up
// to 4096, fewer above, so that a group's vectors, held in memory until
// written, stay at 64 MiB whatever the dimension.
func groupRows(f int) int {
	return max(1, min(embeddingGroupRows, embeddingGroupRows*4096/f))
}

// writeEmbeddings writes the image records as an embeddings table to path.
func (w *World) writeEmbeddings(ctx context.Context, path string) (rows int64, err error) {
	return writeVectorTable(ctx, w, path, func(b *schema.EmbeddingsCols, id string, vec []float32) {
		b.ParentASIN, b.Embedding = append(b.ParentASIN, id), append(b.Embedding, vec)
	})
}

// writeVectorTable writes the image records as a table of T to path, each
// row appended by add, in row groups of groupRows.
func writeVectorTable[T any](ctx context.Context, w *World, path string, add func(b *T, id string, vec []float32)) (rows int64, err error) {
	group := groupRows(w.Config.FeatureDim)
	tw, err := schema.NewWriter[T](path, group)
	if err != nil {
		return 0, err
	}
	defer tw.Close()
	f := w.Config.FeatureDim
	s := newStream()
	var batch T
	n := 0
	for k, i := range w.records {
		if k%group == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		vec := make([]float32, f)
		var asin string
		if i >= 0 {
			w.feature(w.Latent(int(i)), s.reset(w.seed, purposeFeature, int(i)).Rand, vec)
			asin = w.Items[i].ASIN
		} else {
			asin = w.orphanFeature(int(-i-1), vec)
		}
		add(&batch, asin, vec)
		if n++; n == group || k == len(w.records)-1 {
			if err := tw.Append(batch); err != nil {
				return 0, err
			}
			batch, n = *new(T), 0
		}
	}
	return tw.Close()
}

// appendMeta2023 appends item i's metadata as one 2023 line: one flat
// category path (the item's own, for an item of a subcategory), the brand
// as store, no related lists, bought_together null as in the release.
func (w *World) appendMeta2023(b []byte, i int, m *Meta, rs []Review) []byte {
	path := m.Categories[0]
	if it := &w.Items[i]; it.Kind == Regular {
		own := w.subcatPath(&w.Subcats[it.Subcat])
		for _, p := range m.Categories {
			if len(p) >= len(own) && slices.Equal(p[:len(own)], own) {
				path = p
				break
			}
		}
	}
	rating := 0.0
	for _, rv := range rs {
		rating += rv.Overall
	}
	if len(rs) > 0 {
		rating = math.Round(rating/float64(len(rs))*10) / 10
	}
	b = append(b, `{"main_category": "AMAZON FASHION", "title": `...)
	b = appendJSONString(b, m.Title)
	b = append(b, `, "average_rating": `...)
	b = pyFloat(b, rating)
	b = append(b, `, "rating_number": `...)
	b = strconv.AppendInt(b, int64(len(rs)), 10)
	b = append(b, `, "features": [], "description": [`...)
	if m.Description != "" {
		b = appendJSONString(b, m.Description)
	}
	b = append(b, `], "price": `...)
	if m.HasPrice {
		b = pyFloat(b, m.Price)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `, "images": [], "videos": [], "store": `...)
	if m.Brand != "" {
		b = appendJSONString(b, m.Brand)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `, "categories": [`...)
	for k, c := range path {
		if k > 0 {
			b = append(b, ", "...)
		}
		b = appendJSONString(b, c)
	}
	b = append(b, `], "details": {}, "parent_asin": `...)
	b = appendJSONString(b, m.ASIN)
	return append(b, ", \"bought_together\": null}\n"...)
}

// appendReview2023 appends rv as one 2023 review line by user at ms.
func appendReview2023(b []byte, rv *Review, user string, ms int64) []byte {
	b = append(b, `{"rating": `...)
	b = pyFloat(b, rv.Overall)
	b = append(b, `, "title": `...)
	b = appendJSONString(b, rv.Summary)
	b = append(b, `, "text": `...)
	b = appendJSONString(b, rv.ReviewText)
	b = append(b, `, "images": [], "asin": `...)
	b = appendJSONString(b, rv.ASIN)
	b = append(b, `, "parent_asin": `...)
	b = appendJSONString(b, rv.ASIN)
	b = append(b, `, "user_id": `...)
	b = appendJSONString(b, user)
	b = append(b, `, "timestamp": `...)
	b = strconv.AppendInt(b, ms, 10)
	b = append(b, `, "helpful_vote": `...)
	b = strconv.AppendInt(b, int64(rv.Helpful[0]), 10)
	return append(b, ", \"verified_purchase\": true}\n"...)
}
