package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"monomer/internal/cpuflags"
	"monomer/internal/nearest"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
)

// OpenBLAS picks its CPU kernel when the library loads, before any Go code
// runs, from OPENBLAS_CORETYPE or its own CPU detection (which falls back to
// the SSE3 "Prescott" kernel on CPUs newer than it knows: 0.3.21 does so on
// Sapphire/Emerald Rapids). A kernel narrower than the CPU supports costs
// 1.6-4x in sgemm (BENCHMARKS.md, "BLAS kernel costs"; AVX2 costs nothing on AMD Zen 4), so by default the binary picks the widest
// kernel the CPU supports and, when another one is loaded, re-executes
// itself with OPENBLAS_CORETYPE set to it.

// reexecGuard is set in the environment of the re-executed process so a
// kernel OpenBLAS does not honour cannot make it loop. (Not a job override:
// EnvOverrides reads only MONOMER_<top-level job key>.)
const reexecGuard = "MONOMER_BLAS_REEXEC"

// Kernel levels by the widest SIMD they use; 0 is a name not listed.
const (
	levelSSE = 1 + iota
	levelAVX
	levelAVX2
	levelAVX512
)

var kernelLevels = map[string]int{
	"prescott": levelSSE, "core2": levelSSE, "penryn": levelSSE, "dunnington": levelSSE,
	"nehalem": levelSSE, "atom": levelSSE, "opteron": levelSSE, "barcelona": levelSSE, "bobcat": levelSSE,
	"sandybridge": levelAVX, "bulldozer": levelAVX, "piledriver": levelAVX, "steamroller": levelAVX, "excavator": levelAVX,
	"haswell": levelAVX2, "zen": levelAVX2,
	"skylakex": levelAVX512, "cooperlake": levelAVX512, "sapphirerapids": levelAVX512,
}

func kernelLevel(name string) int { return kernelLevels[strings.ToLower(name)] }

// hostCPU is the CPU the kernel choice is made for; the tests replace it
// to play a CPU of another kind.
var hostCPU = cpuflags.Host

// cpuKernel is the widest OpenBLAS kernel this CPU runs, with its level;
// "" for a CPU with no more than AVX, where OpenBLAS's own pick is kept.
func cpuKernel() (string, int) {
	f := hostCPU().Flags
	if k := f.Widest(); k != "" {
		return k, kernelLevel(k)
	}
	if f["avx"] {
		return "", levelAVX
	}
	return "", levelSSE
}

// checkRunnable refuses a kernel this CPU lacks the instructions for:
// OpenBLAS would load it all the same and the process would stop on an
// illegal instruction (SIGILL) at its first matrix product.
func checkRunnable(what, kernel string) error {
	c := hostCPU()
	if why := c.Reason(kernel); why != "" {
		return fmt.Errorf("%w: %s %s needs %s, which this CPU (%s) lacks (%s): OpenBLAS would stop on an illegal instruction; use auto (here %s) or a kernel that `monomer blas --kernels` says runs",
			pipeline.ErrUsage, what, kernel, c.Lacks(kernel), c.Model, why, orNone(c.Flags.Widest()))
	}
	return nil
}

func orNone(k string) string {
	if k == "" {
		return "OpenBLAS's own pick"
	}
	return k
}

// blasEnv is the environment variable that, like every MONOMER_<job key>,
// overrides the job's blas_kernel, and serves commands run without a job.
const blasEnv = job.EnvPrefix + "BLAS_KERNEL"

// blasChoice is the one resolution of the kernel choice, which every
// command uses: --blas-kernel, else the job's blas_kernel (j loaded with
// the environment's overrides, so MONOMER_BLAS_KERNEL over the file), else,
// with no job, MONOMER_BLAS_KERNEL, else auto. "env" leaves the kernel to
// OPENBLAS_CORETYPE or OpenBLAS's detection. An unknown name is an error.
func blasChoice(g *globalOptions, j *job.Job) (string, error) {
	if g.blasKernel != "" {
		if err := models.CheckKernel(g.blasKernel); err != nil {
			return "", fmt.Errorf("%w: --blas-kernel: %v", pipeline.ErrUsage, err)
		}
		return g.blasKernel, nil
	}
	if j != nil {
		return j.BLASKernel, nil // validated with the job
	}
	choice := os.Getenv(blasEnv)
	if err := models.CheckKernel(choice); err != nil {
		return "", fmt.Errorf("%w: %s: %v", job.ErrConfig, blasEnv, err)
	}
	return choice, nil
}

// kernelChoice resolves a blas_kernel value ("" = auto) to the
// OPENBLAS_CORETYPE to run with; "" keeps the environment's.
func kernelChoice(choice string) (choiceName, coretype string) {
	switch strings.ToLower(choice) {
	case "", "auto":
		k, _ := cpuKernel()
		return "auto", k
	case "env":
		return "env", ""
	}
	return choice, choice
}

// applyBLASKernel re-executes the binary with OPENBLAS_CORETYPE set when the
// kernel loaded is not the chosen one. It returns only if no re-execution is
// needed (or it failed, which is reported and otherwise ignored: the run
// goes on with the loaded kernel, which the manifests record). In the
// re-executed process, a kernel named explicitly that OpenBLAS did not load
// (a name this version does not know, a kernel this build lacks or this CPU
// cannot run) is an error: running another one silently would be a lie.
//
// A kernel this CPU cannot run, named by the choice or, with "env", by
// OPENBLAS_CORETYPE, is an error in every build, so a job file means the
// same wherever it runs.
func applyBLASKernel(choice string) error {
	name, want := kernelChoice(choice)
	switch {
	case name == "env" && os.Getenv("OPENBLAS_CORETYPE") != "":
		// OpenBLAS takes a name it does not know for its own pick without
		// a word, so a misspelt kernel ran as another one.
		if ct := os.Getenv("OPENBLAS_CORETYPE"); models.CheckKernel(ct) != nil || strings.EqualFold(ct, "auto") || strings.EqualFold(ct, "env") {
			hint := ""
			if near, ok := nearest.Slip(ct, models.OpenBLASKernels); ok {
				hint = "; did you mean " + near + "?"
			}
			return fmt.Errorf("%w: blas_kernel env: OPENBLAS_CORETYPE=%s is not a kernel OpenBLAS knows (%s)%s",
				pipeline.ErrUsage, ct, strings.Join(models.OpenBLASKernels, ", "), hint)
		}
		if err := checkRunnable("blas_kernel env: OPENBLAS_CORETYPE", os.Getenv("OPENBLAS_CORETYPE")); err != nil {
			return err
		}
	case name != "auto" && want != "":
		if err := checkRunnable("blas_kernel", want); err != nil {
			return err
		}
	}
	info := models.BLAS()
	if info.Impl != "openblas" {
		return nil
	}
	if want == "" || strings.EqualFold(info.Kernel, want) {
		return nil
	}
	if os.Getenv(reexecGuard) != "" {
		if name == "auto" {
			return nil // this OpenBLAS does not know the CPU's kernel: keep its pick
		}
		return fmt.Errorf("%w: blas_kernel %s: OpenBLAS %s loaded %s instead: it does not know %s or cannot run it on this CPU",
			pipeline.ErrUsage, want, info.Version, info.Kernel, want)
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "monomer: cannot re-execute with OPENBLAS_CORETYPE=%s: %v\n", want, err)
		return nil
	}
	env := []string{"OPENBLAS_CORETYPE=" + want, reexecGuard + "=" + want}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") && !strings.HasPrefix(kv, reexecGuard+"=") {
			env = append(env, kv)
		}
	}
	err = syscall.Exec(exe, os.Args, env)
	fmt.Fprintf(os.Stderr, "monomer: cannot re-execute with OPENBLAS_CORETYPE=%s: %v\n", want, err)
	return nil
}

// blasWarning is the one WARN line about a slow BLAS, or "" when the fast
// path runs: the pure-Go build, or an OpenBLAS kernel narrower than the CPU's.
func blasWarning(info models.BLASInfo) string {
	if info.Impl != "openblas" {
		return "built without OpenBLAS: dense matrix products run in pure Go, about 10x slower per training evaluation " +
			"than OpenBLAS on this kind of machine (features multiplied as sparse rows, such as most image features, " +
			"run as fast; BENCHMARKS.md); install libopenblas-dev and rebuild with `make build`"
	}
	best, level := cpuKernel()
	if have := kernelLevel(info.Kernel); best != "" && have > 0 && have < level {
		return fmt.Sprintf("OpenBLAS runs the %s kernel, narrower than this CPU supports (%s): %s "+
			"(BENCHMARKS.md); fix: blas_kernel: auto (the default) or --blas-kernel %s",
			info.Kernel, best, slowdown(have, halves(hostCPU())), best)
	}
	return ""
}

// slowdown is the measured sgemm cost of a kernel level against AVX-512
// (BENCHMARKS.md, "BLAS kernel costs"), on a CPU that runs 512-bit instructions
// at full width or, halves true, as two 256-bit halves.
func slowdown(level int, halves bool) string {
	switch {
	case level == levelAVX2 && halves:
		return "sgemm measured as fast as with AVX-512 on AMD Zen 4, which runs 512-bit instructions as two 256-bit halves, but rounds otherwise"
	case level == levelAVX2:
		return "sgemm is about 1.6x slower"
	case level == levelAVX:
		return "sgemm is about 2x slower (not measured)"
	}
	return "sgemm is about 4x slower"
}

// halvesAVX512 reports whether /proc/cpuinfo's text names an AMD Zen 4 with
// AVX-512 (family 25 = 0x19; Zen 3 of the same family has none), whose
// 512-bit instructions run as two 256-bit halves: there OpenBLAS's AVX2
// kernel measured as fast as its AVX-512 ones (BENCHMARKS.md, "BLAS kernel
// costs"). Zen 5
// (family 26) runs them at full width. Empty text (not Linux) is false.
func halvesAVX512(cpuinfo string) bool { return halves(cpuflags.Parse(cpuinfo)) }

func halves(c cpuflags.CPU) bool {
	return c.Vendor == "AuthenticAMD" && c.Family == "25" && c.Flags["avx512f"]
}

// logBLAS logs the BLAS that runs, and the warning if any, once per run.
func logBLAS(log *slog.Logger, choice string) {
	info := models.BLAS()
	name, _ := kernelChoice(choice)
	log.Info("blas", "impl", info.Impl, "version", info.Version, "kernel", info.Kernel, "blas_kernel", name)
	if w := blasWarning(info); w != "" {
		log.Warn(w)
	}
}

func newBLASCommand(g *globalOptions) *cobra.Command {
	var kernels bool
	cmd := &cobra.Command{
		Use:   "blas [JOB.yaml] [--blas-kernel auto|env|NAME] [--kernels]",
		Short: "Print the BLAS and CPU kernel a run would use",
		Long: `blas applies the kernel choice exactly as run does (--blas-kernel over
MONOMER_BLAS_KERNEL over the job's blas_kernel over "auto") and prints the BLAS implementation, its
version, the kernel that runs and the widest kernel the CPU supports, with
the warning run would log, if any.

--kernels prints instead the CPU's model and, one a line, every kernel
name blas_kernel accepts with "runs" or the reason this CPU cannot run it
("SkylakeX: this CPU has no avx512f, ..."), read from the CPU's flags
(/proc/cpuinfo on Linux): a kernel it cannot run is refused with exit 2.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if kernels {
				printKernels(cmd.OutOrStdout())
				return nil
			}
			var j *job.Job
			if len(args) == 1 {
				var err error
				if j, err = loadJob(args[0], nil); err != nil {
					return err
				}
			}
			choice, err := blasChoice(g, j)
			if err != nil {
				return err
			}
			if err := applyBLASKernel(choice); err != nil {
				return err
			}
			name, _ := kernelChoice(choice)
			info := models.BLAS()
			best, _ := cpuKernel()
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "impl: %s\nversion: %s\nkernel: %s\nblas_kernel: %s\ncpu_kernel: %s\nconfig: %s\n",
				info.Impl, info.Version, info.Kernel, name, best, info.Config)
			if msg := blasWarning(info); msg != "" {
				fmt.Fprintf(w, "warning: %s\n", msg)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&kernels, "kernels", false, "list the OpenBLAS kernels and whether this CPU runs each")
	return cmd
}

// printKernels writes `cpu: MODEL` and a `NAME: runs|REASON` line per
// kernel, the lines `make test-kernels` reads.
func printKernels(w io.Writer) {
	c := hostCPU()
	fmt.Fprintf(w, "cpu: %s\n", c.Model)
	for _, k := range models.OpenBLASKernels {
		why := c.Reason(k)
		if why == "" {
			why = "runs"
		}
		fmt.Fprintf(w, "%s: %s\n", k, why)
	}
}
