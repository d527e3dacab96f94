package dotkern

import "math"

// Panel is the number of candidate rows packed side by side by Pack32: the
// float32 kernels read Panel candidates' k-th values as one vector.
const Panel = 16

// Dot is q·v in the package's fixed arithmetic: the bits Dots gives for the
// pair (TestMatchesGo), for rescoring one pair alone.
func Dot(q, v []float64) float64 { return dot(q, v) }

// Pack32 rounds nv float64 rows of length d (v, row-major) to float32 and
// stores them in panels of Panel rows: value k of row p·Panel+j goes to
// dst[(p·d+k)·Panel+j]. The last panel is padded with zeros. dst must hold
// Panels(nv)·d·Panel values.
func Pack32(dst []float32, v []float64, nv, d int) {
	dst = dst[:Panels(nv)*d*Panel]
	clear(dst)
	for r := range nv {
		p, j := r/Panel, r%Panel
		base := p * d * Panel
		for k, x := range v[r*d : (r+1)*d] {
			dst[base+k*Panel+j] = float32(x)
		}
	}
}

// Panels is the number of panels of nv rows.
func Panels(nv int) int { return (nv + Panel - 1) / Panel }

// Scores32 sets s[i*ls+j] to q_i·v_j in float32 for i < nq and j <
// np·Panel, q_i being q[i*d:(i+1)*d] and v_j the j-th row of the np panels
// at p (Pack32's layout). The summation order and the use of fused
// multiply-adds differ between CPUs: use it through Bound32, never for a
// value that is written. Rows past a multiple of 16 take a slower path, so
// callers pad the queries.
func Scores32(s []float32, ls int, q []float32, nq int, p []float32, np, d int) {
	if nq == 0 || np == 0 {
		return
	}
	_ = q[:nq*d]
	_ = p[:np*d*Panel]
	_ = s[(nq-1)*ls+np*Panel-1]
	i := 0
	if d == 0 {
		// Nothing for the assembly to read: all scores are 0.
		scores32Go(s, ls, q, nq, p, np, d)
		return
	}
	switch {
	case useAVX512:
		// A panel (d·64 bytes) stays in L1 while every query row meets it.
		n := nq &^ 15
		for pi := range np {
			for r := 0; r < n; r += 16 {
				scores16x16(&s[r*ls+pi*Panel], ls, &q[r*d], d, &p[pi*d*Panel])
			}
		}
		i = n
	case useFMA:
		n := nq &^ 3
		for pi := range np {
			for r := 0; r < n; r += 4 {
				scores4x16(&s[r*ls+pi*Panel], ls, &q[r*d], d, &p[pi*d*Panel])
			}
		}
		i = n
	}
	scores32Go(s[i*ls:], ls, q[i*d:], nq-i, p, np, d)
}

func scores32Go(s []float32, ls int, q []float32, nq int, p []float32, np, d int) {
	var acc [Panel]float32
	for i := range nq {
		qi := q[i*d : (i+1)*d]
		for pi := range np {
			acc = [Panel]float32{}
			pp := p[pi*d*Panel : (pi+1)*d*Panel]
			for k, x := range qi {
				col := pp[k*Panel : (k+1)*Panel]
				for j := range acc {
					acc[j] += x * col[j]
				}
			}
			copy(s[i*ls+pi*Panel:], acc[:])
		}
	}
}

// Bound32 bounds the difference between a Scores32 score and Dots' float64
// score of the same pair: for q and v of length d ≤ MaxBound32,
//
//	|Scores32(q, v) − Dot(q, v)| ≤ Bound32(d) · Norm32(q) · Norm32(v),
//
// NaN-free unless an input holds a NaN (then Norm32 is +Inf). With
// u = 2⁻²⁴ and S = Σ|q_k v_k| ≤ ‖q‖‖v‖ (Cauchy-Schwarz), the difference is
// at most the sum of (Higham, Accuracy and Stability of Numerical
// Algorithms, §3.1, γ_n = nu/(1−nu)):
//   - rounding q and v to float32: (2u + u²)·S, plus an absolute error of
//     2⁻¹²⁶ a value below float32's normal range (so also with
//     denormals-are-zero), 2⁻¹²⁶·(1+u)·(‖q‖₁ + ‖v‖₁) ≤ 2⁻¹¹⁶·(‖q‖ + ‖v‖);
//   - the float32 sum in any order, fused or not: γ_d(u)·(1+u)²·S, plus
//     2⁻¹²⁶ a product or sum that underflows (flush-to-zero too): 2d·2⁻¹²⁶;
//   - Dot's own rounding: γ_d(2⁻⁵³)·S + 2d·2⁻¹⁰⁷⁴.
//
// For d ≤ 2²⁰ (du ≤ 1/16, γ_d(u) ≤ 1.07du) that is below
// 1.1(d+2)u·(‖q‖+α)(‖v‖+α) with α = 2⁻⁵⁰, whose α terms hold the absolute
// ones with room to spare. Bound32 doubles it: the margin covers the
// rounding of the norms, of the bound's product and of the caller's sum
// s32 + ε in float64 (each a few 2⁻⁵³ relative to ‖q‖‖v‖, against a
// margin of (d+2)u‖q‖‖v‖). It is +Inf for larger d.
func Bound32(d int) float64 {
	if d > MaxBound32 {
		return math.Inf(1)
	}
	return 2 * float64(d+2) * 0x1p-24
}

// MaxBound32 is the longest row Bound32 bounds.
const MaxBound32 = 1 << 20

// Norm32 is ‖x‖ + 2⁻⁵⁰ in float64, the factor of Bound32; +Inf when ‖x‖
// exceeds 2⁵⁰ or x holds a NaN, so that no float32 product or sum can
// overflow unnoticed (|q_k v_k| ≤ 2¹⁰⁰, a sum of 2²⁰ of them < 2¹²⁸) and
// the bound of such a pair is +Inf.
func Norm32(x []float64) float64 {
	var t float64
	for _, v := range x {
		t += v * v
	}
	n := math.Sqrt(t)
	if !(n <= 0x1p50) {
		return math.Inf(1)
	}
	return n + 0x1p-50
}

// Screen returns the first j ≥ from with !(float64(s[j]) + eq·vn[j] < thr),
// or len(s): the next pair whose bound (a Scores32 score plus eq·vn[j], eq
// = Bound32·Norm32(q), vn[j] = Norm32(v_j)) reaches a threshold, NaN
// counting as reaching it. The sum may be fused or not: Bound32's margin
// covers its rounding either way. vn is as long as s.
func Screen(s []float32, vn []float64, from int, eq, thr float64) int {
	vn = vn[:len(s)]
	j := from
	if n := len(s) - j; n > 0 {
		switch {
		case useAVX512 && n >= 16:
			j += screen16(&s[j], &vn[j], n&^15, eq, thr)
			if j < from+n&^15 {
				return j
			}
		case useFMA && n >= 8:
			j += screen8(&s[j], &vn[j], n&^7, eq, thr)
			if j < from+n&^7 {
				return j
			}
		}
	}
	for ; j < len(s); j++ {
		if !(float64(s[j])+eq*vn[j] < thr) {
			return j
		}
	}
	return j
}
