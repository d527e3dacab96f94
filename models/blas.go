package models

import (
	"errors"
	"fmt"
	"strings"
)

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

// OpenBLASKernels are the CPU kernel names x86-64 OpenBLAS (built with
// DYNAMIC_ARCH, as distributions build it) accepts in OPENBLAS_CORETYPE,
// matched without regard to case: the core-name table of its
// driver/others/dynamic.c as of 0.3.21 (each checked to load under Debian
// 12's library), then SapphireRapids, which later versions add. The table's
// 32-bit kernels (Katmai, Coppermine, Northwood, Banias, Athlon) are left
// out: a 64-bit process gets Prescott for them. OpenBLAS itself ignores a
// name it does not know, silently, and detects the CPU instead.
var OpenBLASKernels = []string{
	"Prescott", "Atom", "Core2", "Penryn", "Dunnington", "Nehalem", "Opteron",
	"Opteron_SSE3", "Barcelona", "Nano", "Sandybridge", "Bobcat", "Bulldozer",
	"Piledriver", "Haswell", "Steamroller", "Excavator", "Zen", "SkylakeX",
	"Cooperlake", "SapphireRapids",
}

// CheckKernel checks a blas_kernel choice: "" or "auto", "env", or one of
// OpenBLASKernels. Its error lists them, and in the pure-Go build says that
// the choice does not apply there (the name is checked all the same, so a
// job file valid in one build is valid in the other).
func CheckKernel(choice string) error {
	switch strings.ToLower(choice) {
	case "", "auto", "env":
		return nil
	}
	for _, k := range OpenBLASKernels {
		if strings.EqualFold(k, choice) {
			return nil
		}
	}
	msg := fmt.Sprintf("%q is not auto, env or a kernel OpenBLAS knows (%s)", choice, strings.Join(OpenBLASKernels, ", "))
	if BLAS().Impl != "openblas" {
		msg += "; this build has no OpenBLAS, so no kernel choice applies to it, but the name must still be one of these"
	}
	return errors.New(msg)
}
