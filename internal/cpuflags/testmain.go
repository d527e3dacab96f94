package cpuflags

import (
	"fmt"
	"os"
)

// RunTests is for the TestMain of a package whose tests run OpenBLAS in
// their own process: with OPENBLAS_CORETYPE naming a kernel this CPU cannot
// run, the first matrix product would stop the test binary with SIGILL, so
// it prints `SKIPPING <kernel>: <reason>` and runs nothing (exit code 0);
// otherwise it runs the tests and returns their exit code.
func RunTests(m interface{ Run() int }) int {
	if k := os.Getenv("OPENBLAS_CORETYPE"); k != "" {
		if why := host().Reason(k); why != "" {
			fmt.Printf("SKIPPING %s: %s\n", k, why)
			return 0
		}
	}
	return m.Run()
}

// host is Host, replaced in this package's tests.
var host = Host
