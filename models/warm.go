package models

import (
	"fmt"
	"math"
)

// Start is a previous fit to start training from instead of the seeded
// initialisation (the job's warm_from, docs/scheduling.md): yesterday's
// parameters for today's data.
type Start struct {
	// C is the previous fit's offset.
	C float64
	// Params are its blocks on raw features, as Fit.Params holds them, with
	// rows already mapped to this run's feature dimensions (MapRows):
	// shapes must be those of the Spec's model at this dimension.
	Params []Param
	// Lambda is the λ the previous fit chose: the grid's λ closest to it is
	// fitted first (StartIndex).
	Lambda float64
}

// How a grid point was started (GridPoint.Start).
const (
	// StartRandom is the seeded initialisation.
	StartRandom = ""
	// StartPath is the parameters kept at the λ fitted before it
	// (Spec.WarmStart).
	StartPath = "path"
	// StartWarm is a previous run's fit (Spec.Start).
	StartWarm = "warm_from"
)

// StartIndex is the index in lambdas of the λ fitted first from a Start
// at λ: the one equal to it, else the closest (ties: the smaller, then the
// first listed).
func StartIndex(lambdas []float64, lambda float64) int {
	best := 0
	for i, l := range lambdas {
		d, bd := math.Abs(l-lambda), math.Abs(lambdas[best]-lambda)
		if d < bd || d == bd && l < lambdas[best] {
			best = i
		}
	}
	return best
}

// warmOrder is GridOrder with the grid point first moved to the front:
// the previous fit's λ, then the rest of the path (or the grid) as before.
func warmOrder(lambdas []float64, warmStart bool, first int) []int {
	order := []int{first}
	for _, i := range GridOrder(lambdas, warmStart) {
		if i != first {
			order = append(order, i)
		}
	}
	return order
}

// MapRows returns params with their rows carried over to a new set of
// feature dimensions: row r of each result block is row from[r] of the
// block given, or zeros where from[r] < 0 (a dimension the previous fit did
// not have: a term new today starts at zero, contributing nothing to any
// distance until the data move it). Rows of the old blocks no entry names
// (a term gone today) are dropped.
func MapRows(params []Param, from []int) ([]Param, error) {
	out := make([]Param, len(params))
	for i, p := range params {
		if len(p.Data) != p.Rows*p.Cols {
			return nil, fmt.Errorf("models: parameter %s: %d values for %d×%d: %w", p.Name, len(p.Data), p.Rows, p.Cols, ErrSpec)
		}
		d := make([]float64, len(from)*p.Cols)
		for r, o := range from {
			if o >= p.Rows {
				return nil, fmt.Errorf("models: parameter %s: row %d of %d: %w", p.Name, o, p.Rows, ErrSpec)
			}
			if o >= 0 {
				copy(d[r*p.Cols:(r+1)*p.Cols], p.Data[o*p.Cols:(o+1)*p.Cols])
			}
		}
		out[i] = Param{Name: p.Name, Rows: len(from), Cols: p.Cols, Data: d}
	}
	return out, nil
}

// RowMap maps the feature names of today (to) to their rows in a previous
// fit's (from): RowMap(from, to)[r] is the index of to[r] in from, or -1.
// A name listed twice in from maps to its first row.
func RowMap(from, to []string) []int {
	at := make(map[string]int, len(from))
	for i, s := range from {
		if _, ok := at[s]; !ok {
			at[s] = i
		}
	}
	out := make([]int, len(to))
	for r, s := range to {
		out[r] = -1
		if i, ok := at[s]; ok {
			out[r] = i
		}
	}
	return out
}

// startTheta is θ₀ = [c, Θ] for a Start: the blocks packed in the model's
// layout and divided by the feature scale (Fit.Params hold s·Θ on raw
// features, and this run's s is its own).
func (t *trainer) startTheta(s *Start) ([]float64, error) {
	raw, err := t.model.pack(s.Params)
	if err != nil {
		return nil, fmt.Errorf("models: %s: warm start: %w", t.spec.Model, err)
	}
	theta := make([]float64, 1+len(raw))
	theta[0] = s.C
	for i, v := range raw {
		theta[1+i] = v / t.train.scale
		if math.IsNaN(theta[1+i]) || math.IsInf(theta[1+i], 0) {
			return nil, fmt.Errorf("models: %s: warm start: parameter %d is %v: %w", t.spec.Model, i, v, ErrSpec)
		}
	}
	if math.IsNaN(s.C) || math.IsInf(s.C, 0) {
		return nil, fmt.Errorf("models: %s: warm start: offset c is %v: %w", t.spec.Model, s.C, ErrSpec)
	}
	return theta, nil
}

// CheckStart reports whether st fits the model spec trains on features of
// dimension dim: every block of the model's layout, of its shape, and no
// other.
func (s Spec) CheckStart(dim int, st *Start) error {
	s, err := s.resolve()
	if err != nil {
		return err
	}
	m, err := newModel(s.Model, dim, s.K, s.N)
	if err != nil {
		return err
	}
	if _, err := m.pack(st.Params); err != nil {
		return fmt.Errorf("models: %s (K=%d, N=%d, %d features): %w", s.Model, s.K, s.N, dim, err)
	}
	if n := len(m.params(make([]float64, m.size()))); len(st.Params) != n {
		return fmt.Errorf("models: %s: %d parameter blocks, want %d: %w", s.Model, len(st.Params), n, ErrSpec)
	}
	return nil
}
