package models

import "strings"

// BLASInfo names the BLAS that computes the matrix products. Its String is
// recorded in every manifest and is part of the train and evaluate stages'
// cache keys: two implementations or kernels round differently, so they must
// not share cached outputs.
type BLASInfo struct {
	// Impl is "openblas" or "gonum" (the pure-Go build).
	Impl string `json:"impl"`
	// Version is OpenBLAS's version ("0.3.21"), or empty for gonum.
	Version string `json:"version,omitempty"`
	// Kernel is the CPU kernel OpenBLAS runs (openblas_get_corename), e.g.
	// "Haswell" or "Cooperlake"; "go" for gonum.
	Kernel string `json:"kernel"`
	// Config is openblas_get_config, verbatim.
	Config string `json:"config,omitempty"`
}

func (b BLASInfo) String() string {
	s := b.Impl
	if b.Version != "" {
		s += " " + b.Version
	}
	return s + " " + b.Kernel
}

// BLAS returns the BLAS of this build and process.
func BLAS() BLASInfo { return blasInfo() }

// openblasVersion extracts the version from openblas_get_config's
// "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." ("" if it does not start so).
func openblasVersion(config string) string {
	f := strings.Fields(config)
	if len(f) >= 2 && f[0] == "OpenBLAS" {
		return f[1]
	}
	return ""
}
