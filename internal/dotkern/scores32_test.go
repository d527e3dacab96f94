package dotkern

import (
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
)

// cpuSeconds is the process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// paths runs fn once per float32 kernel the CPU has, that kernel forced.
func paths(t *testing.T, fn func(t *testing.T)) {
	a, f := useAVX512, useFMA
	defer func() { useAVX512, useFMA = a, f }()
	for _, p := range []struct {
		name        string
		avx512, fma bool
	}{{"avx512", true, false}, {"avx2", false, true}, {"go", false, false}} {
		if (p.avx512 && !a) || (p.fma && !f) {
			t.Logf("%s: not on this CPU", p.name)
			continue
		}
		useAVX512, useFMA = p.avx512, p.fma
		t.Run(p.name, fn)
	}
}

// TestScores32Bound: on every kernel, every Scores32 score is within
// Bound32 of Dot's float64 score of the same pair, over lengths around the
// vector widths, query counts leaving rows for the Go tail, candidate
// counts leaving a padded panel, and values that cancel, underflow float32
// and exceed it. On Gaussian rows the largest error seen is a sizeable
// share of the bound (it is not absurdly loose).
func TestScores32Bound(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(8, 1))
		worst := 0.0
		for _, d := range []int{0, 1, 7, 16, 17, 84, 101, 404} {
			for _, nq := range []int{1, 3, 4, 5, 16, 17, 35} {
				for _, nv := range []int{1, 15, 16, 33} {
					for _, kind := range []string{"gauss", "cancel", "scales"} {
						q, v := make([]float64, nq*d), make([]float64, nv*d)
						fill(rng, kind, q)
						fill(rng, kind, v)
						if kind == "cancel" {
							// v_1 nearly equal to q_0: a large positive score
							// next to rows whose scores nearly cancel.
							for k := 0; nv > 1 && k < d; k++ {
								v[d+k] = q[k] * (1 + 1e-9*rng.NormFloat64())
							}
						}
						np := Panels(nv)
						p := make([]float32, np*d*Panel)
						Pack32(p, v, nv, d)
						q32 := make([]float32, len(q))
						for i, x := range q {
							q32[i] = float32(x)
						}
						ls := np*Panel + 3
						s := make([]float32, nq*ls)
						for i := range s {
							s[i] = float32(math.NaN()) // every score must be written
						}
						Scores32(s, ls, q32, nq, p, np, d)
						for i := range nq {
							nqi := Norm32(q[i*d : (i+1)*d])
							for j := range nv {
								exact := Dot(q[i*d:(i+1)*d], v[j*d:(j+1)*d])
								eps := Bound32(d) * nqi * Norm32(v[j*d:(j+1)*d])
								diff := math.Abs(float64(s[i*ls+j]) - exact)
								if math.IsInf(eps, 1) && kind == "scales" {
									continue // out of float32's safe range: always rescored
								}
								if !(diff <= eps) {
									t.Fatalf("d=%d nq=%d nv=%d %s: pair (%d,%d): float32 %v, float64 %v, |diff| %g > bound %g", d, nq, nv, kind, i, j, s[i*ls+j], exact, diff, eps)
								}
								if kind == "gauss" && d >= 16 {
									worst = max(worst, diff/eps)
								}
							}
						}
					}
				}
			}
		}
		// Typical errors grow as √d u‖q‖‖v‖ against the bound's 2(d+2)u:
		// at these lengths the worst seen is a few percent of it.
		t.Logf("largest error / bound on Gaussian rows: %.3g", worst)
		if worst < 0.01 {
			t.Fatalf("largest error %.3g of the bound: the bound is looser than expected", worst)
		}
	})
}

func fill(rng *rand.Rand, kind string, x []float64) {
	for i := range x {
		switch kind {
		case "gauss", "cancel":
			x[i] = rng.NormFloat64()
		case "scales":
			switch rng.IntN(7) {
			case 0:
				x[i] = rng.NormFloat64() * 1e-42 // float32 subnormal
			case 1:
				x[i] = rng.NormFloat64() * 1e-60 // below float32's range
			case 2:
				x[i] = rng.NormFloat64() * 1e30 // past Norm32's limit: an infinite bound
			case 5:
				x[i] = rng.NormFloat64() * 1e12 // products near float32's top
			case 3:
				x[i] = 0
			default:
				x[i] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
			}
		}
	}
}

// TestNorm32Limits: rows beyond Bound32's range get an infinite factor,
// so their pairs are always rescored; a NaN row too.
func TestNorm32Limits(t *testing.T) {
	for _, tc := range []struct {
		x    []float64
		want float64
	}{
		{[]float64{3, 4}, 5 + 0x1p-50},
		{[]float64{0, 0}, 0x1p-50},
		{[]float64{0x1p51, 0}, math.Inf(1)},
		{[]float64{1e300, 1e300}, math.Inf(1)},
		{[]float64{math.NaN(), 1}, math.Inf(1)},
	} {
		if got := Norm32(tc.x); got != tc.want {
			t.Errorf("Norm32(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if !math.IsInf(Bound32(MaxBound32+1), 1) {
		t.Error("Bound32 past MaxBound32 is finite")
	}
}

// TestPack32Layout: Pack32 puts row r's value k where the kernels read it,
// and zeros in the padding.
func TestPack32Layout(t *testing.T) {
	const nv, d = 19, 3
	v := make([]float64, nv*d)
	for i := range v {
		v[i] = float64(i + 1)
	}
	p := make([]float32, Panels(nv)*d*Panel)
	for i := range p {
		p[i] = -1
	}
	Pack32(p, v, nv, d)
	for pi := range Panels(nv) {
		for k := range d {
			for j := range Panel {
				r, want := pi*Panel+j, float32(0)
				if r < nv {
					want = float32(v[r*d+k])
				}
				if got := p[(pi*d+k)*Panel+j]; got != want {
					t.Fatalf("panel %d k %d lane %d: %v, want %v", pi, k, j, got, want)
				}
			}
		}
	}
}

func BenchmarkScores32(b *testing.B) {
	for _, d := range []int{84, 101} {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			const nq, nv = 32, 2048
			rng := rand.New(rand.NewPCG(1, 1))
			q, v := make([]float32, nq*d), make([]float64, nv*d)
			for i := range q {
				q[i] = float32(rng.NormFloat64())
			}
			for i := range v {
				v[i] = rng.NormFloat64()
			}
			p := make([]float32, Panels(nv)*d*Panel)
			Pack32(p, v, nv, d)
			s := make([]float32, nq*nv)
			cpu0 := cpuSeconds()
			for b.Loop() {
				Scores32(s, nv, q, nq, p, Panels(nv), d)
			}
			flop := float64(2*nq*nv*d) * float64(b.N)
			b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			// The machines are shared: per CPU-second is what other load
			// moves least.
			b.ReportMetric(flop/(cpuSeconds()-cpu0)/1e9, "GFLOP/cpu-s")
		})
	}
}

// TestScreen: on every kernel, Screen finds the same next pair as the
// plain comparison from every start, NaN scores, NaN and infinite bounds
// and thresholds counting as reached, at lengths around the vector widths.
func TestScreen(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(4, 2))
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100} {
			for trial := range 30 {
				s, vn := make([]float32, n), make([]float64, n)
				for j := range s {
					s[j] = float32(rng.NormFloat64())
					vn[j] = rng.Float64()
					switch rng.IntN(40) {
					case 0:
						s[j] = float32(math.NaN())
					case 1:
						vn[j] = math.Inf(1)
					}
				}
				eq, thr := 0.01*rng.Float64(), 1.5+rng.Float64()
				switch trial % 10 {
				case 0:
					thr = math.NaN()
				case 1:
					thr = math.Inf(-1)
				case 2:
					eq = math.Inf(1)
				}
				for from := 0; from <= n; from++ {
					want := from
					for want < n && float64(s[want])+eq*vn[want] < thr {
						want++
					}
					if got := Screen(s, vn, from, eq, thr); got != want {
						t.Fatalf("n=%d trial %d from %d: Screen = %d, want %d", n, trial, from, got, want)
					}
				}
			}
		}
	})
}
