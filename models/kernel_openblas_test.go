//go:build openblas

package models

import (
	"os"
	"testing"

	"monomer/internal/cpuflags"
)

// TestMain skips the package on a CPU that cannot run the kernel forced
// through OPENBLAS_CORETYPE, rather than dying with SIGILL.
func TestMain(m *testing.M) { os.Exit(cpuflags.RunTests(m)) }
