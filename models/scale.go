package models

import (
	"fmt"
	"math"
)

// Feature scaling. Train fits every model as if each feature vector were
// multiplied by s = 1/sqrt(mean ‖f‖²), the mean over the distinct items of
// the train pairs, so the scaled features have mean squared norm 1 whatever
// their kind (image activations ≈ 16, sum-to-one bag-of-words vectors
// 0.02-0.05) and λ‖Θ‖² is the same strength of regularisation for both: at
// the start of training ‖Θ‖² ≈ F/2 per embedding block whatever the
// features.
//
// Every parameter block multiplies the features linearly (w ∘ f, Eᵀf, Uᵀf),
// so fitting Θ on s·f is fitting s·Θ on f: the kernels keep reading the raw
// rows and receive s·Θ, the gradient is scaled by s on the way back, and the
// penalty is taken on Θ. Fit.Params hold s·Θ, the parameters on raw
// features, so scoring needs no scale; Fit.FeatureScale records s.

// minMeanSq is the mean ‖f‖² below which features count as zero and are not
// scaled: the float32 kernels square feature differences, and below about
// 1e-30 those squares underflow (float32's smallest normal is 1.2e-38), so
// blowing Θ up by 1e15 and more would only turn zeros into NaN.
const minMeanSq = 1e-30

// featureScale returns 1/sqrt(mean ‖f_i‖²) over items, or 1 when every row
// is (numerically) zero.
func featureScale(src rowSource, items []int32) float64 {
	// The norms in parallel, their sum in item order: the same bits at any
	// GOMAXPROCS. One pass over every train row, as much memory as a
	// projection: serial, it was 3 % of an LMT fit at the medium world's
	// Women's size and bounded the speedup more cores give.
	sq := make([]float64, len(items))
	forSpans(len(items), 0, func(lo, hi int) {
		buf := make([]float32, src.dim)
		for k := lo; k < hi; k++ {
			sq[k] = src.sqNorm(int(items[k]), buf)
		}
	})
	var sum float64
	for _, v := range sq {
		sum += v
	}
	if len(items) == 0 || !(sum > 0) || math.IsInf(sum, 0) {
		return 1
	}
	mean := sum / float64(len(items))
	if mean < minMeanSq {
		return 1
	}
	return 1 / math.Sqrt(mean)
}

// toRaw returns the kernels' parameters s·Θ for the scaled-feature
// parameters Θ (without c), in a buffer of o reused by the next call.
func (o *objective) toRaw(theta []float64) []float64 {
	if o.scale == 1 {
		return theta
	}
	o.raw = append(o.raw[:0], theta...)
	for i := range o.raw {
		o.raw[i] *= o.scale
	}
	return o.raw
}

// gradFromRaw turns a gradient with respect to s·Θ into one with respect to
// Θ.
func (o *objective) gradFromRaw(grad []float64) {
	if o.scale == 1 {
		return
	}
	for i := range grad {
		grad[i] *= o.scale
	}
}

// UnusableFeatures says why features of dimension dim, whose rows over the
// items vary by variance (imagefeat.Spread.Variance) with values up to
// maxAbs in magnitude, can train no model, "" when they can:
//   - a variance of 0 (every item has the same vector, all zero or any
//     constant): every model is a constant predictor;
//   - a variance below minMeanSq: the differences are below what the
//     float32 kernels resolve (their squares underflow), and scaling
//     cannot help (featureScale leaves such features unscaled);
//   - a value whose square, times 4·dim, overflows float32: the kernels'
//     squared differences of two rows are then infinite.
func UnusableFeatures(variance, maxAbs float64, dim int) string {
	switch limit := math.Sqrt(math.MaxFloat32 / (4 * float64(max(dim, 1)))); {
	case variance == 0:
		return "every item has the same vector (zero variance across items), so no model can tell items apart"
	case !(variance >= minMeanSq):
		return fmt.Sprintf("the vectors vary by a variance of %.3g across items, below the %g the float32 kernels resolve (denormal-range values)", variance, minMeanSq)
	case !(maxAbs <= limit):
		return fmt.Sprintf("a value of magnitude %.3g, above the %.3g at which squared distances of %d-dimensional vectors overflow float32", maxAbs, limit, dim)
	}
	return ""
}
