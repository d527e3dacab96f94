package report

import (
	"fmt"
	"math"
	"slices"

	"monomer/models"
)

// NearChanceAUC is how close to 0.5 a chosen fit's validation AUC may be
// before the report warns that the model learned next to nothing: within
// it, one pair in twenty ranks better than a coin would.
const NearChanceAUC = 0.05

// fitWarnings are the small-data warnings a fit gives of itself, beside
// the training-size one (smallDataWarning): a learned model whose chosen
// fit's validation AUC is within NearChanceAUC of 0.5, or which never beat
// its random start on validation (models.FlagKeptStart). Either says its
// test error is the data's, not the model's, so no comparison rests on it.
func fitWarnings(in *Input) []string {
	var out []string
	for _, m := range models.ByColumn() {
		if m.Counted || !slices.Contains(in.Models, m.Name) {
			continue
		}
		for _, r := range in.Metrics {
			if r.Model == m.Name && r.Selected && r.Split == "valid" && math.Abs(r.AUC-0.5) < NearChanceAUC {
				out = append(out, fmt.Sprintf("%s: %s's validation AUC at the chosen λ is %.3f, within %g of chance: it ranked related pairs barely better than a coin, so its errors say little about the model; more data or other features would",
					in.Name, m.Title, r.AUC, NearChanceAUC))
			}
		}
		if slices.Contains(in.Flags[m.Name], models.FlagKeptStart) {
			out = append(out, fmt.Sprintf("%s: %s's fit never beat its random starting point on validation (the start was kept): it learned nothing the data could confirm, so its errors say little about the model",
				in.Name, m.Title))
		}
	}
	return out
}
