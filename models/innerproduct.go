package models

import "fmt"

// The inner-product form of LMT's and Monomer's distances (see Retriever):
// d(x, y) = c_x − q_x·v_y, so that ranking by q_x·v_y descending is
// ranking by d ascending, and P(related) = σ(c − c_x + q_x·v_y). The
// retriever scores with these vectors and `monomer export` writes them:
// one construction, so an exported list is the retriever's list.

// InnerDim is the length of q_x and v_y: N(K+1) for Monomer (N spaces, the
// gate folded into q), K+1 for LMT; 0 for a model without an embedding.
func (f *Fit) InnerDim() int {
	if f.Model != ModelLMT && f.Model != ModelMonomer {
		return 0
	}
	return max(f.N, 1) * (f.K + 1)
}

// ItemVectors returns v_y of every row of p (a projection of f), row-major,
// InnerDim values a row: [e_1(y) … e_N(y), −‖e_1(y)‖² … −‖e_N(y)‖²].
func (f *Fit) ItemVectors(p *Projection) ([]float64, error) {
	d := f.InnerDim()
	if d == 0 {
		return nil, fmt.Errorf("models: %s has no inner-product form: %w", f.Model, ErrSpec)
	}
	n, k := max(f.N, 1), f.K
	out := make([]float64, len(p.Items)*d)
	for i := range p.Items {
		v := out[i*d : (i+1)*d]
		for s := range n {
			e := f.space(p, i, s+1)
			copy(v[s*k:], e)
			var sq float64
			for _, x := range e {
				sq += x * x
			}
			v[n*k+s] = -sq
		}
	}
	return out, nil
}

// QueryVectors returns q_x of every row of p, row-major, InnerDim values a
// row, [2p_1 a … 2p_N a, p_1 … p_N] with a = E₀ᵀf_x and p Monomer's gate
// (Eq. 5; p = 1 for LMT), and each row's query offset c_x = ‖a‖², which is
// Σ_k p_k‖a‖² since the gate sums to 1 (Eqs. 4-6).
func (f *Fit) QueryVectors(p *Projection) (q, offset []float64, err error) {
	d := f.InnerDim()
	if d == 0 {
		return nil, nil, fmt.Errorf("models: %s has no inner-product form: %w", f.Model, ErrSpec)
	}
	n, kk := max(f.N, 1), f.K
	q, offset = make([]float64, len(p.Items)*d), make([]float64, len(p.Items))
	for i := range p.Items {
		a, v := f.anchor(p, i), q[i*d:(i+1)*d]
		g := []float64{1}
		if f.Model == ModelMonomer {
			g = p.Gate(i)
		}
		for s := range n {
			for j, x := range a {
				v[s*kk+j] = 2 * g[s] * x
			}
			v[n*kk+s] = g[s]
		}
		for _, x := range a {
			offset[i] += x * x
		}
	}
	return q, offset, nil
}

// space is e_k of row i of a projection: E_k's block for Monomer, E for LMT.
func (f *Fit) space(p *Projection, i, k int) []float64 {
	if f.Model == ModelLMT {
		return p.Block(i, "E")
	}
	return p.Block(i, fmt.Sprintf("E%d", k))
}

// anchor is a = E₀ᵀf_x of row i: E₀'s block for Monomer, E for LMT.
func (f *Fit) anchor(p *Projection, i int) []float64 {
	if f.Model == ModelLMT {
		return p.Block(i, "E")
	}
	return p.Block(i, "E0")
}
