package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"monomer/internal/cpuflags"
)

// realCPU is this machine's own CPU, whatever GO_MONOMER_CPUINFO plays.
var realCPU = cpuflags.Host

// playedCPU reads a recorded /proc/cpuinfo.
func playedCPU(file string) (cpuflags.CPU, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return cpuflags.CPU{}, fmt.Errorf("GO_MONOMER_CPUINFO: %v", err)
	}
	c := cpuflags.Parse(string(b))
	if len(c.Flags) == 0 {
		return c, fmt.Errorf("GO_MONOMER_CPUINFO: %s holds no flags line", file)
	}
	return c, nil
}

// lastEnv is the value of the last k=v of env for key k ("" when absent),
// the one a process sees.
func lastEnv(env []string, k string) string {
	v := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, k+"=") {
			v = kv[len(k)+1:]
		}
	}
	return v
}

var jobKernel = regexp.MustCompile(`(?m)^blas_kernel:\s*(\S+)`)

// loadedKernel is the OpenBLAS kernel a binary started with env and args
// in dir would load: --blas-kernel, else a job file's blas_kernel, else
// MONOMER_BLAS_KERNEL, else auto (the widest the played CPU c runs); "env"
// is OPENBLAS_CORETYPE. "" when it keeps OpenBLAS's own pick.
func loadedKernel(c cpuflags.CPU, dir string, env, args []string) string {
	choice := ""
	if i := slices.Index(args, "--blas-kernel"); i >= 0 && i+1 < len(args) {
		choice = args[i+1]
	} else if len(args) > 1 && strings.HasSuffix(args[1], ".yaml") {
		if b, err := os.ReadFile(filepath.Join(dir, args[1])); err == nil {
			if m := jobKernel.FindSubmatch(b); m != nil {
				choice = string(m[1])
			}
		}
	}
	if choice == "" {
		choice = lastEnv(env, blasEnv)
	}
	switch strings.ToLower(choice) {
	case "", "auto":
		return c.Flags.Widest()
	case "env":
		return lastEnv(env, "OPENBLAS_CORETYPE")
	}
	return choice
}

// playedUpward skips, by name and with the reason, a test whose binary
// plays a CPU (GO_MONOMER_CPUINFO) that runs a kernel this machine's CPU
// cannot: the binary would load it rather than refuse it, and stop on an
// illegal instruction. A kernel the played CPU lacks too is refused before
// OpenBLAS loads, so those tests run everywhere.
func playedUpward(t *testing.T, dir string, env, args []string) {
	t.Helper()
	f := lastEnv(env, "GO_MONOMER_CPUINFO")
	if f == "" {
		return
	}
	played, err := playedCPU(f)
	if err != nil {
		t.Fatal(err)
	}
	k := loadedKernel(played, dir, env, args)
	if k == "" || !played.Flags.Runs(k) {
		return
	}
	if why := realCPU().Reason(k); why != "" {
		t.Skipf("SKIPPING %s as %s: it would load %s, which this machine's CPU (%s) cannot run: %s",
			t.Name(), played.Model, k, realCPU().Model, why)
	}
}

// cpuTestFuncs are the calls and names by which a test's expectation
// depends on the CPU monomer believes it runs on.
var cpuTestFuncs = []string{"hostCPU", "cpuKernel", "skipUnlessRuns", "levelAVX2", "levelAVX512", "halves", "GO_MONOMER_CPUINFO"}

// TestCPUTestsPlayed: every test of this package whose expectation depends
// on the CPU (it asks hostCPU, cpuKernel, the kernel levels, or plays a CPU)
// is in the Makefile's CPU_TESTS, so `make test-cpus` runs it as every
// recorded CPU; a new one left out fails here, not on a Zen 3.
func TestCPUTestsPlayed(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CPU_TESTS := (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no CPU_TESTS := line")
	}
	run, err := regexp.Compile(string(m[1]))
	if err != nil {
		t.Fatalf("Makefile CPU_TESTS: %v", err)
	}
	files, _ := filepath.Glob("*_test.go")
	fset := token.NewFileSet()
	found := 0
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestCPUTestsPlayed" || fn.Name.Name == "TestMain" {
				continue
			}
			uses := ""
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					if slices.Contains(cpuTestFuncs, n.Name) {
						uses = n.Name
					}
				case *ast.BasicLit:
					if strings.Contains(n.Value, "GO_MONOMER_CPUINFO") {
						uses = "GO_MONOMER_CPUINFO"
					}
				}
				return uses == ""
			})
			if uses == "" {
				continue
			}
			found++
			if !run.MatchString(fn.Name.Name) {
				t.Errorf("%s: %s depends on the CPU (it uses %s) but the Makefile's CPU_TESTS does not run it", fset.Position(fn.Pos()), fn.Name.Name, uses)
			}
		}
	}
	if found == 0 {
		t.Error("no CPU-dependent test found: the check looks for the wrong names")
	}
}
