package synth_test

import (
	"testing"

	"monomer/synth"
)

// BenchmarkNewWorld measures latents and edge planting: items/s.
func BenchmarkNewWorld(b *testing.B) {
	for _, scale := range []string{"tiny", "small"} {
		b.Run(scale, func(b *testing.B) {
			cfg, _ := synth.Scale(scale)
			var n int
			for b.Loop() {
				w, err := synth.NewWorld(cfg, 1)
				if err != nil {
					b.Fatal(err)
				}
				n = len(w.Items)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
	}
}

// BenchmarkWrite measures writing the three files (plain .b): items/s and,
// through SetBytes, MB/s of uncompressed output.
func BenchmarkWrite(b *testing.B) {
	for _, scale := range []string{"tiny", "small"} {
		b.Run(scale, func(b *testing.B) {
			cfg, _ := synth.Scale(scale)
			w, err := synth.NewWorld(cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			dir := b.TempDir()
			var st synth.WriteStats
			for b.Loop() {
				st = write(b, w, dir, synth.WriteOptions{})
			}
			b.SetBytes(st.MetaRaw + st.ReviewRaw + st.FeatureBytes)
			b.ReportMetric(float64(len(w.Items))*float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
	}
}
