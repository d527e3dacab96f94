package stages

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"monomer/pipeline"
	"monomer/report"
	"monomer/schema"
)

// What the report reads of a job's seeds (job.Job.Seeds): each seed's
// evaluate node of every experiment, evaluate for the first seed and
// evaluate.<tag> for the others.

// seedInputs reads experiment exp's nodes of the seed whose node names
// end in "."+tag ("" for the first seed): a stage run once per seed is
// read from its replica, any other from its one node.
func seedInputs(env *pipeline.Env, exp, tag string) inputs {
	return func(stage string) (string, error) {
		if tag != "" {
			if dir, err := env.StageDir(exp, stage+"."+tag); err == nil {
				return dir, nil
			}
		}
		return env.StageDir(exp, stage)
	}
}

// seedKey names one (experiment, model, split) of the job metrics.
type seedKey struct{ exp, model, split string }

// seedsOf reads every seed's evaluate tables of the job's experiments: the
// spread over seeds of each (experiment, model, split)'s error at the
// chosen λ, and the paired tests of report.ComparedPairs on the test pairs.
func seedsOf(ctx context.Context, env *pipeline.Env, p *reportParams) (map[seedKey]report.Spread, *report.SeedSummary, error) {
	tags := append([]string{""}, p.SeedTags...)
	seeds := p.Seeds
	if len(seeds) == 0 {
		seeds = []uint64{p.firstSeed()}
	}
	spreads := map[seedKey]report.Spread{}
	sum := &report.SeedSummary{Seeds: seeds}
	for i := range p.Experiments {
		r := &p.Experiments[i]
		errs := map[seedKey][]float64{}
		var order []seedKey
		counts := make([]report.Correct, len(report.ComparedPairs))
		for _, tag := range tags {
			in := seedInputs(env, r.Name, tag)
			path, err := in.file("evaluate", "metrics.parquet")
			if err != nil {
				return nil, nil, err
			}
			ms, err := readMetrics(ctx, path)
			if err != nil {
				return nil, nil, err
			}
			for _, m := range ms {
				if !m.Selected {
					continue
				}
				k := seedKey{r.Name, m.Model, m.Split}
				if _, ok := errs[k]; !ok {
					order = append(order, k)
				}
				errs[k] = append(errs[k], m.Error)
			}
			if err := countCorrect(ctx, in, r.Models, counts); err != nil {
				return nil, nil, err
			}
		}
		for _, k := range order {
			s := report.SpreadOf(errs[k])
			spreads[k] = s
			if k.split == "test" {
				sum.Errors = append(sum.Errors, report.SeedError{Experiment: r.Name, Model: k.model, Spread: s})
			}
		}
		for c, pair := range report.ComparedPairs {
			if slices.Contains(r.Models, pair[0]) && slices.Contains(r.Models, pair[1]) {
				sum.Comparisons = append(sum.Comparisons, report.Compare(r.Name, pair[0], pair[1], len(tags), counts[c]))
			}
		}
	}
	return spreads, sum, nil
}

// countCorrect adds one seed's test pairs to counts, one per pair of
// report.ComparedPairs that the experiment trained (ms). The predictions
// table holds each model's test pairs in pairs order, so the two models'
// i-th test rows are the same pair.
func countCorrect(ctx context.Context, in inputs, ms []string, counts []report.Correct) error {
	path, err := in.file("evaluate", "predictions.parquet")
	if err != nil {
		return err
	}
	var c schema.PredictionsCols
	if err := schema.ReadFields(ctx, path, &c, &c.Model, &c.Split, &c.Label, &c.Predicted); err != nil {
		return err
	}
	right := map[string][]bool{} // model -> its test pairs, right or wrong
	for i, m := range c.Model {
		if c.Split[i] == "test" {
			right[m] = append(right[m], c.Predicted[i] == c.Label[i])
		}
	}
	for k, pair := range report.ComparedPairs {
		if !slices.Contains(ms, pair[0]) || !slices.Contains(ms, pair[1]) {
			continue
		}
		a, b := right[pair[0]], right[pair[1]]
		if len(a) != len(b) {
			return fmt.Errorf("stages: %s: %d test pairs of %s, %d of %s (want the same pairs)", path, len(a), pair[0], len(b), pair[1])
		}
		for i := range a {
			counts[k].Add(a[i], b[i])
		}
	}
	return nil
}

// comparisonsTable is the job's comparisons table.
func comparisonsTable(p *report.Provenance, cs []report.Comparison) schema.ComparisonsCols {
	var t schema.ComparisonsCols
	for _, c := range cs {
		t.Experiment, t.ModelA, t.ModelB = append(t.Experiment, c.Experiment), append(t.ModelA, c.A), append(t.ModelB, c.B)
		t.Seeds, t.Pairs = append(t.Seeds, int32(c.Seeds)), append(t.Pairs, c.Counts.Pairs)
		t.AOnly, t.BOnly = append(t.AOnly, c.Counts.OnlyA), append(t.BOnly, c.Counts.OnlyB)
		t.Test, t.Statistic, t.PValue = append(t.Test, c.Test), append(t.Statistic, c.Statistic), append(t.PValue, c.PValue)
		t.ErrorA, t.ErrorB = append(t.ErrorA, c.ErrorA), append(t.ErrorB, c.ErrorB)
		t.Job, t.JobHash = append(t.Job, p.Job), append(t.JobHash, p.JobHash)
	}
	return t
}

// writeComparisons writes comparisons.parquet into dir.
func writeComparisons(dir string, p *report.Provenance, cs []report.Comparison) (int64, error) {
	return schema.Write(filepath.Join(dir, "comparisons.parquet"), comparisonsTable(p, cs))
}
