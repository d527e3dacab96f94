package stages

import (
	"fmt"
	"math"

	"monomer/models"
	"monomer/pipeline"
)

// fitProgress draws one progress bar per λ of a model's grid, reading
// "train lmt λ=0.0001 valid_error=0.2839 ... (37/200)": the model, λ, the
// iteration of max_iter and the latest validation error. One bar per λ,
// because a fit usually stops before max_iter and the next λ starts over.
type fitProgress struct {
	env     *pipeline.Env
	model   string
	maxIter int
	grid    int // GridIndex of the current bar, -1 before the first
	label   string
	cur     pipeline.Tracker
}

func newFitProgress(env *pipeline.Env, model string, maxIter int) *fitProgress {
	return &fitProgress{env: env, model: model, maxIter: maxIter, grid: -1}
}

// update is models.Train's progress callback.
func (f *fitProgress) update(p models.Progress) {
	if p.GridIndex != f.grid {
		f.done()
		f.grid = p.GridIndex
		f.label = fmt.Sprintf("train %s λ=%g", f.model, p.Lambda)
		f.cur = f.env.Track(f.label, int64(f.maxIter))
	}
	if p.Iter > 0 { // iteration 0 is the starting point
		f.cur.Add(1)
	}
	if !math.IsNaN(p.ValidError) {
		pipeline.Describe(f.cur, fmt.Sprintf("%s valid_error=%.4f", f.label, p.ValidError))
	}
}

func (f *fitProgress) done() {
	if f.cur != nil {
		f.cur.Done()
		f.cur = nil
	}
}
