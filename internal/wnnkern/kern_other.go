//go:build !amd64

package wnnkern

// Dist is Σ_j w2_j (a_j − b_j)² over j < len(w2) (see kern.go).
func Dist(w2, a, b, next []float32) float32 { return distGo(w2, a, b) }

// Grad adds g·(a_j − b_j)² to acc_j for j < len(acc).
func Grad(acc []float32, g float32, a, b []float32) { gradGo(acc, g, a, b) }
