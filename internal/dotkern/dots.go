package dotkern

// qBlock is the number of query rows that meet the same candidates before
// the next candidates are read; even, for the 2-row assembly tile. Its
// effect was within the noise of the shared machine it was tried on
// (docs/notes/2026-11-25-recommend-same-bits.md).
const qBlock = 32

// Dots sets s[i*ls+j] = q_i · v_j for i < nq and j < nv, where q_i is
// q[i*d : (i+1)*d] and v_j is v[j*d : (j+1)*d].
func Dots(s []float64, ls int, q []float64, nq int, v []float64, nv int, d int) {
	if nq == 0 || nv == 0 {
		return
	}
	// Bounds the assembly relies on, checked once.
	_ = q[:nq*d]
	_ = v[:nv*d]
	_ = s[(nq-1)*ls+nv-1]
	i := 0
	if hasAVX2 && d >= 4 {
		// Blocks of qBlock queries (about 27 KB at d = 101, so they stay in
		// L1/L2) each meet every 4 candidates in turn, and those 4 rows stay
		// in L1 while every query pair of the block reads them: the
		// candidates are streamed from memory once per block, not once per
		// query pair.
		pairs := nq &^ 1
		for i0 := 0; i0 < pairs; i0 += qBlock {
			i1 := min(i0+qBlock, pairs)
			j := 0
			for ; j+4 <= nv; j += 4 {
				for i := i0; i < i1; i += 2 {
					dots2x4(&s[i*ls+j], ls, &q[i*d], d, &v[j*d])
					for k := d &^ 3; k < d; k++ {
						for a := range 2 {
							qa := q[(i+a)*d+k]
							for b := range 4 {
								// The tail, added after the lanes as in dot.
								s[(i+a)*ls+j+b] += float64(qa * v[(j+b)*d+k])
							}
						}
					}
				}
			}
			for ; j < nv; j++ {
				for i := i0; i < i1; i++ {
					s[i*ls+j] = dot(q[i*d:(i+1)*d], v[j*d:(j+1)*d])
				}
			}
		}
		i = pairs
	}
	for ; i < nq; i++ {
		for j := range nv {
			s[i*ls+j] = dot(q[i*d:(i+1)*d], v[j*d:(j+1)*d])
		}
	}
}

// dot is a·b in the package's arithmetic (see the package comment); the
// explicit conversions forbid Go from fusing a multiply and an add.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var l [4]float64
	n := len(a) &^ 3
	for k := 0; k < n; k += 4 {
		l[0] += float64(a[k] * b[k])
		l[1] += float64(a[k+1] * b[k+1])
		l[2] += float64(a[k+2] * b[k+2])
		l[3] += float64(a[k+3] * b[k+3])
	}
	s := (l[0] + l[2]) + (l[1] + l[3])
	for k := n; k < len(a); k++ {
		s += float64(a[k] * b[k])
	}
	return s
}
