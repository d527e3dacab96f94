package stages

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"monomer/bow"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// vocabulary_from (docs/scheduling.md, "Warm starts"): the features
// stage's bag of words over an earlier run's vocabulary.

// fixedVocabulary is the vocabulary table vocabulary_from names for
// experiment e, or why there is none.
func fixedVocabulary(e *job.Resolved) (path, missing string) {
	run, why := predecessorRun(e, e.VocabularyFrom)
	if why != "" {
		return "", strings.Replace(why, "warm_from", "vocabulary_from", 1)
	}
	path = filepath.Join(run, e.Name, Features{}.Name(), "vocabulary.parquet")
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Sprintf("%s has no vocabulary", filepath.Dir(path))
	}
	return path, ""
}

// VocabOutsideWarn is how much larger than a recounted vocabulary's the
// share of today's candidate term occurrences outside a fixed vocabulary
// may be before features warns: 0.05 of the text, against 0.0001 for the
// generator's day 2 (docs/scheduling.md, "Warm starts", says why).
const VocabOutsideWarn = 0.05

// readFixedVocabulary reads an earlier run's vocabulary table as terms in
// term-id order.
func readFixedVocabulary(ctx context.Context, path string) ([]bow.Term, error) {
	v, err := schema.ReadAll[schema.VocabularyCols](ctx, path)
	if err != nil {
		return nil, err
	}
	out := make([]bow.Term, len(v.Term))
	for i := range out {
		k, ok := bow.ParseKind(v.Kind[i])
		if !ok || v.TermID[i] != int32(i) {
			return nil, fmt.Errorf("stages: vocabulary_from: %s row %d: term %q of kind %q at id %d", path, i, v.Term[i], v.Kind[i], v.TermID[i])
		}
		out[i] = bow.Term{Term: v.Term[i], Kind: k, Count: v.Count[i]}
	}
	return out, nil
}

// vectorizeFixed vectorises docs over the vocabulary table at path and
// returns the coverage stats, with a WARN when the text has moved away from
// the vocabulary (VocabOutsideWarn).
func vectorizeFixed(ctx context.Context, path string, docs iter.Seq2[bow.Doc, error], items int, opts bow.Options) (*bow.Result, map[string]any, []pipeline.Warning, error) {
	fixed, err := readFixedVocabulary(ctx, path)
	if err != nil {
		return nil, nil, nil, err
	}
	res, cov, err := bow.VectorizeFixed(ctx, docs, items, fixed, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	out, own := cov.OutsideShare(), cov.OwnOutsideShare()
	stats := map[string]any{"candidates": cov.Candidates, "outside": cov.Outside, "outside_share": out,
		"own_outside": cov.OwnOutside, "own_outside_share": own}
	var warns []pipeline.Warning
	if out-own > VocabOutsideWarn {
		warns = append(warns, pipeline.Warning{Msg: fmt.Sprintf("vocabulary_from: %.1f %% of this run's noun, adjective and adjective-noun occurrences are outside the fixed vocabulary, against %.1f %% outside the one these reviews would give: the text has moved away from it (more than %g of it); recount it by leaving vocabulary_from out",
			100*out, 100*own, VocabOutsideWarn), Attrs: map[string]any{"outside_share": out, "own_outside_share": own}})
	}
	return res, stats, warns, nil
}
