package wnnkern

// lanes is the distance's accumulator layout: four 8-lane AVX2
// registers, element j of each 32-element block added into lane j mod 32.
const lanes = 32

// distGo is Σ_j w2_j (a_j − b_j)² over j < len(w2), summed as the
// assembly does: blocks of 32 into 32 lanes, then blocks of 8 into lanes
// 0-7, the rest into a separate scalar s; the lanes are reduced as
// r_l = (acc_l + acc_{l+16}) + (acc_{l+8} + acc_{l+24}) for l < 8, then
// u_i = r_i + r_{i+4}, then (u_0 + u_2) + (u_1 + u_3), and s added last.
func distGo(w2, a, b []float32) float32 {
	n := len(w2)
	a, b = a[:n], b[:n]
	var acc [lanes]float32
	j := 0
	for ; j+lanes <= n; j += lanes {
		ww, aa, bb := w2[j:j+lanes:j+lanes], a[j:j+lanes:j+lanes], b[j:j+lanes:j+lanes]
		for l := range acc {
			t := aa[l] - bb[l]
			acc[l] += float32(ww[l] * float32(t*t))
		}
	}
	for ; j+8 <= n; j += 8 {
		ww, aa, bb := w2[j:j+8:j+8], a[j:j+8:j+8], b[j:j+8:j+8]
		for l := range 8 {
			t := aa[l] - bb[l]
			acc[l] += float32(ww[l] * float32(t*t))
		}
	}
	var s float32
	for ; j < n; j++ {
		t := a[j] - b[j]
		s += float32(w2[j] * float32(t*t))
	}
	var r [8]float32
	for l := range r {
		r[l] = (acc[l] + acc[l+16]) + (acc[l+8] + acc[l+24])
	}
	var u [4]float32
	for i := range u {
		u[i] = r[i] + r[i+4]
	}
	return ((u[0] + u[2]) + (u[1] + u[3])) + s
}

// gradGo adds g·(a_j − b_j)² to acc_j for j < len(acc): elementwise, so
// the assembly matches it whatever its vector width.
func gradGo(acc []float32, g float32, a, b []float32) {
	n := len(acc)
	a, b = a[:n], b[:n]
	for j := range acc {
		t := a[j] - b[j]
		acc[j] += float32(g * float32(t*t))
	}
}
