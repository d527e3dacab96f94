package stages

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"monomer/imagefeat"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/report"
	"monomer/schema"
)

// embeddingFeatures writes the matrix of the user's vectors
// (data.embeddings) where the image path writes its own, so that training
// reads both alike; the items without a vector are left out of
// feature_items, as bag-of-words leaves out those without words.
func embeddingFeatures(ctx context.Context, env *pipeline.Env, p featuresParams, it *items) (*pipeline.Result, error) {
	path := p.Embeddings[0]
	tr := env.Track("read "+filepath.Base(path), 0)
	st, err := imagefeat.ExtractEmbeddings(ctx, path, it.rows(), len(it.asin), p.RejectRatio,
		filepath.Join(env.OutDir, imageMatrixFile), imagefeat.WithProgress(tr.Add))
	tr.Done()
	if errors.Is(err, imagefeat.ErrEmbeddings) {
		return nil, fmt.Errorf("%w: %w", pipeline.ErrBadInput, err)
	}
	if err != nil {
		return nil, err
	}
	if st.Kept == 0 {
		return nil, fmt.Errorf("%w: no item of experiment %s has a vector in %s (%d rows, %d of ids that are not items, the first %s; items look like %s)",
			pipeline.ErrBadInput, env.Experiment, path, st.Rows, st.Unknown, st.FirstUnknown, it.asin[0])
	}
	asin := make([]string, 0, st.Kept)
	idx := make([]int32, 0, st.Kept)
	missing := st.Missing
	for i, a := range it.asin {
		if len(missing) > 0 && missing[0] == int32(i) {
			missing = missing[1:]
			continue
		}
		asin, idx = append(asin, a), append(idx, int32(i))
	}
	spread, err := checkSpread(ctx, env, path, idx, true)
	if err != nil {
		return nil, err
	}
	n, err := schema.Write(filepath.Join(env.OutDir, "feature_items.parquet"), schema.FeatureItemsCols{ASIN: asin, ItemIdx: idx})
	if err != nil {
		return nil, err
	}
	share := float64(st.Kept) / float64(len(it.asin))
	var warnings []pipeline.Warning
	if st.Rejected > 0 {
		// As ingest warns of every file with rejects: a run under
		// reject_ratio still lost those rows, and only the stats said so.
		warnings = append(warnings, pipeline.Warning{
			Msg: fmt.Sprintf("%s: %d of %d rows rejected (first: %s); see features' stats",
				filepath.Base(path), st.Rejected, st.Rows, st.FirstReject),
			Attrs: map[string]any{"file": path, "rejects": st.Rejected, "rows": st.Rows,
				"non_finite": st.NonFinite, "wrong_dim": st.WrongDim, "null_rows": st.NullRows, "empty_ids": st.EmptyIDs, "duplicates": st.Duplicates},
		})
	}
	if report.LowCoverage(int(st.Kept), len(it.asin)) {
		warnings = append(warnings, pipeline.Warning{
			Msg: fmt.Sprintf("%s has vectors for %d of the %d items in scope (%.1f %%): the others are left out of training and evaluation",
				filepath.Base(path), st.Kept, len(it.asin), 100*share),
			Attrs: map[string]any{"kept": st.Kept, "items": len(it.asin), "share": share},
		})
	}
	return &pipeline.Result{
		Rows:     map[string]int64{"feature_items": n, "embeddings": int64(len(it.asin))},
		Stats:    map[string]any{"embeddings": st, "coverage": share, "spread": spread},
		Warnings: warnings,
	}, nil
}

// checkSpread fails with ErrBadInput when the matrix features wrote
// (source is the file it came from) cannot train any model
// (models.UnusableFeatures) over the items listed in rows. With range
// false only features that do not vary at all are refused: image
// features' magnitudes are image_scale's to set, and the degenerate fits
// of extreme scales are flagged by train.
func checkSpread(ctx context.Context, env *pipeline.Env, source string, rows []int32, ranges bool) (imagefeat.Spread, error) {
	m, err := imagefeat.OpenMatrix(filepath.Join(env.OutDir, imageMatrixFile))
	if err != nil {
		return imagefeat.Spread{}, err
	}
	defer m.Close()
	refuse := func(why string) error {
		return fmt.Errorf("%w: experiment %s: the features from %s carry no usable information over its %d items with a vector: %s",
			pipeline.ErrBadInput, env.Experiment, filepath.Base(source), len(rows), why)
	}
	if !ranges {
		// Image features are refused only when every item has the same
		// vector: found at the second row that differs, where summing the
		// spread of Women's 10.8 GB matrix took half the stage's CPU.
		varies, err := imagefeat.Varies(ctx, m, rows)
		if err != nil || varies {
			return imagefeat.Spread{Rows: len(rows)}, err
		}
		return imagefeat.Spread{Rows: len(rows)}, refuse(models.UnusableFeatures(0, 0, m.Dim()))
	}
	sp, err := imagefeat.SpreadOf(ctx, m, rows)
	if err != nil {
		return sp, err
	}
	why := models.UnusableFeatures(sp.Variance, sp.MaxAbs, m.Dim())
	if why != "" {
		return sp, refuse(why)
	}
	return sp, nil
}

// checkEmbeddingDim applies to model, once the file has told the
// dimension, the bound job validation applies to image features before the
// run: a model projects to at most as many dimensions as the features
// have; and the memory training needs, as the pre-flight does for image
// and bag-of-words features. Train checks it, whose key holds the sizes.
func checkEmbeddingDim(experiment, model string, s models.TrainSettings, dim int) error {
	m := registered(model)
	if m.Bounds != nil {
		for _, b := range m.Bounds(s) {
			if !b.Words && b.Value > dim {
				return fmt.Errorf("%w: experiment %s: settings.%s: %d is above the dimension of the embeddings (its data.embeddings file), %d (%s)",
					job.ErrConfig, experiment, b.Setting, b.Value, dim, b.Why)
			}
		}
	}
	// The pre-flight memory check could not know the dimension (job
	// validation reads no data file): the same check, now that it is known.
	need := modelMemory(model, dim, s)
	if have, err := machineMemory(); err == nil && need > have {
		return fmt.Errorf("%w: experiment %s: training %s needs about %s (%d-dimensional embeddings from its data.embeddings file), more than the %s this machine has available; lower the sizes",
			job.ErrConfig, experiment, model, pipeline.GiB(need), dim, pipeline.GiB(have))
	}
	return nil
}
