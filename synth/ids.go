package synth

import (
	"math/bits"
	"math/rand/v2"
)

const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// pow36[k] = 36^k.
var pow36 = func() (p [13]uint64) {
	p[0] = 1
	for k := 1; k < len(p); k++ {
		p[k] = p[k-1] * 36
	}
	return p
}()

// mulmod returns a*b mod m without overflow.
func mulmod(a, b, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return bits.Rem64(hi, lo, m)
}

// base36 writes v as exactly n upper-case base-36 digits.
func base36(v uint64, n int) string {
	b := make([]byte, n)
	for k := n - 1; k >= 0; k-- {
		b[k] = alnum[v%36]
		v /= 36
	}
	return string(b)
}

// coprimeMul draws a multiplier coprime to 36^k and 10^9 (not divisible by
// 2, 3 or 5), so that x -> a*x + c is a bijection modulo either.
func coprimeMul(r *rand.Rand, m uint64) uint64 {
	for {
		a := r.Uint64N(m)
		if a%2 != 0 && a%3 != 0 && a%5 != 0 {
			return a
		}
	}
}

// asinCodec maps item indices to ASINs: "B0" and 8 base-36 characters, or
// for a fraction of indices an ISBN-10 (9 digits and a check digit that may
// be X). Both maps are affine bijections, so distinct indices give distinct
// ASINs; indices past the world's items name ASINs that are in no file.
type asinCodec struct {
	mulB, addB uint64 // modulo 36^8
	mulI, addI uint64 // modulo 10^9
	isbnFrac   float64
	seed       uint64
}

func newASINCodec(r *rand.Rand, seed uint64, isbnFrac float64) asinCodec {
	return asinCodec{
		mulB: coprimeMul(r, pow36[8]), addB: r.Uint64N(pow36[8]),
		mulI: coprimeMul(r, 1e9), addI: r.Uint64N(1e9),
		isbnFrac: isbnFrac, seed: seed,
	}
}

func (c asinCodec) asin(i int) string {
	h := mix(uint64(i) ^ mix(c.seed^0x15b4))
	if float64(h>>11)/(1<<53) < c.isbnFrac {
		v := (mulmod(uint64(i), c.mulI, 1e9) + c.addI) % 1e9
		return isbn10(v)
	}
	v := (mulmod(uint64(i), c.mulB, pow36[8]) + c.addB) % pow36[8]
	return "B0" + base36(v, 8)
}

// isbn10 appends the ISBN-10 check digit to the 9-digit v.
func isbn10(v uint64) string {
	b := make([]byte, 10)
	sum := uint64(0)
	for k := 8; k >= 0; k-- {
		d := v % 10
		v /= 10
		b[k] = byte('0' + d)
		sum += d * uint64(10-k)
	}
	check := (11 - sum%11) % 11
	if check == 10 {
		b[9] = 'X'
	} else {
		b[9] = byte('0' + check)
	}
	return string(b)
}
