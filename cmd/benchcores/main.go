// Command benchcores measures how the pipeline's stages use the cores
// (`make bench-cores`): it generates a planted world (`monomer gen`),
// prepares it once with a whole run, then reruns each stage alone
// (`--only NODE --force`) at GOMAXPROCS 1, 2 and every power of two up to
// the machine's cores, printing per run the wall and CPU seconds, the
// utilisation CPU / (wall × P), the speedup over P = 1, the peak RSS and
// the sha256 of the stage's outputs, which must be the same at every P.
// The last line is
//
//	cores: min speedup <S> at P=2 over <stages>
//
// over the stages whose P = 1 run took at least -long CPU seconds. With
// -serial, each stage's P = 2 run is made under the execution tracer and
// the CPU profiler (which cost it a little: its wall and CPU include
// them), and the serial share of its CPU (samples on
// goroutines that run no parallel section, internal/traceutil) is printed
// with the Amdahl bound it sets at 16 cores: unlike wall times, a measure
// that other processes on the machine do not move.
//
// With -width W, each stage also runs once at GOMAXPROCS W under the
// tracer, on however few cores the machine has: the kernel shares them,
// and the trace shows how many goroutines the stage keeps running at each
// moment, which is what W cores could run. From that profile it projects
// the stage's speedup on W cores over this machine's
// (traceutil.Summary.Projected), and its outputs must have the same bytes.
//
// Before the stages (or alone, with -machine-only) it measures the
// machine's own scaling (machine.go): fixed work of four kinds split over
// P goroutines, so a stage's speedup can be read against what the cores
// give work of its kind.
//
// It is a benchmark, not a test: wall times depend on what else runs.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	rtrace "runtime/trace"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"monomer/internal/par"
	"monomer/internal/traceutil"
)

type options struct {
	bin, scale, dir, data, only string
	maxIter                     int
	lambda                      float64
	long                        float64
	maxProcs, width             int
	serial, warm                bool
	machine, machineOnly        bool
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/monomer", "the monomer binary to measure")
	flag.StringVar(&o.scale, "scale", "medium", "gen scale of the world: an image scale runs its Women's also_bought image experiment, elect its bag-of-words one")
	flag.StringVar(&o.data, "data", "", "an existing world of the scale (gen --out DIR) to use instead of generating one")
	flag.StringVar(&o.dir, "dir", "", "work directory for the world and the run (default: a temporary one, removed after)")
	flag.StringVar(&o.only, "only", "", "regexp: measure only the stages (plan nodes) it matches")
	flag.IntVar(&o.maxIter, "max-iter", 60, "L-BFGS iterations of each fit (the issue's figures: 60)")
	flag.Float64Var(&o.lambda, "lambda", 1e-4, "the one λ each model trains at")
	flag.Float64Var(&o.long, "long", 1, "stages whose P=1 run takes at least this many CPU seconds enter the last line")
	flag.IntVar(&o.maxProcs, "max-procs", runtime.NumCPU(), "largest GOMAXPROCS measured")
	flag.BoolVar(&o.serial, "serial", false, "also measure each stage's serial share of CPU from a traced P=2 run")
	flag.IntVar(&o.width, "width", 0, "also run each stage traced at GOMAXPROCS W (more than the cores is the point) and project its speedup on W cores from how many goroutines it keeps running")
	flag.BoolVar(&o.warm, "warm", false, "run each stage once, unmeasured, before its measured runs: at sizes near the machine's memory the first run reads from disk what the page cache dropped")
	flag.BoolVar(&o.machine, "machine", true, "first measure the machine's own scaling (machine.go: registers, L2, streaming memory, random rows) at each P, to read the stages' speedups against")
	flag.BoolVar(&o.machineOnly, "machine-only", false, "measure only the machine's own scaling: no world, no run")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchcores:", err)
		os.Exit(1)
	}
}

// procsList is 1, 2 and the powers of two up to max.
func procsList(max int) []int {
	ps := []int{1}
	for p := 2; p <= max; p *= 2 {
		ps = append(ps, p)
	}
	return ps
}

// jobYAML is the measured job of an image scale: the world's Women's
// also_bought image experiment with every model of the paper's Table 2 at
// one λ.
const jobYAML = `name: bench-cores
seed: 1
data_dir: %s
data:
  meta: meta_Clothing_Shoes_and_Jewelry.json.gz
  reviews: reviews_Clothing_Shoes_and_Jewelry.json.gz
  image_features: image_features_Clothing_Shoes_and_Jewelry.b
settings:
  k: 100
  monomer_k: 20
  n: 4
  lambdas: [%g]
  max_iter: %d
experiments:
  - name: women
    category: "Clothing, Shoes & Jewelry > Women"
    graph: also_bought
    features: image
    models: [wnn, lmt, monomer]
`

// textJobYAML is the measured job of a Table 3 text scale (`gen --scale
// elect`): its category's also_bought bag-of-words experiment with every
// model of the paper's Table 4 at one λ, as jobs/elect-bow-one-lambda.yaml.
const textJobYAML = `name: bench-cores
seed: 1
data_dir: %s
settings:
  k: 100
  monomer_k: 20
  n: 4
  vocab_size: 5000
  topics: 100
  lambdas: [%g]
  max_iter: %d
  vocab_sample_tokens: 10000000000
experiments:
  - name: %s
    category: "%s"
    depth: 2
    graph: also_bought
    features: bow
    models: [wnn, ct, lda, lmt, monomer]
    data: {meta: meta_%s.json.gz, reviews: reviews_%s.json.gz}
`

// textScales names the file stem and category of the text scales measured.
var textScales = map[string]struct{ stem, category string }{
	"elect": {"Electronics", "Electronics"},
}

func run(o options) error {
	if o.maxProcs < 1 {
		return fmt.Errorf("-max-procs %d < 1", o.maxProcs)
	}
	only, err := regexp.Compile(o.only)
	if err != nil {
		return fmt.Errorf("-only: %v", err)
	}
	if o.machineOnly {
		procs := procsList(o.maxProcs)
		fmt.Printf("%s, %d CPUs; GOMAXPROCS %v; %s\n", cpuModel(), runtime.NumCPU(), procs, loadAvg())
		machineScaling(procs, 3)
		return nil
	}
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return err
	}
	if o.dir == "" {
		if o.dir, err = os.MkdirTemp("", "benchcores-"); err != nil {
			return err
		}
		defer os.RemoveAll(o.dir)
	}
	data, runDir := filepath.Join(o.dir, "data-"+o.scale), filepath.Join(o.dir, "run")
	if o.data != "" {
		data = o.data
	}
	marker := "image_features_Clothing_Shoes_and_Jewelry.b"
	text, isText := textScales[o.scale]
	if isText {
		marker = "reviews_" + text.stem + ".json.gz"
	}
	if _, err := os.Stat(filepath.Join(data, marker)); err != nil {
		fmt.Printf("gen --scale %s into %s\n", o.scale, data)
		if err := command(bin, nil, "gen", "--scale", o.scale, "--seed", "1", "--out", data).Run(); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
	}
	job := filepath.Join(o.dir, "bench-cores.yaml")
	jobText := fmt.Appendf(nil, jobYAML, data, o.lambda, o.maxIter)
	if isText {
		jobText = fmt.Appendf(nil, textJobYAML, data, o.lambda, o.maxIter, o.scale, text.category, text.stem, text.stem)
	}
	if err := os.WriteFile(job, jobText, 0o644); err != nil {
		return err
	}
	nodes, err := planNodes(bin, job)
	if err != nil {
		return err
	}
	args := []string{"run", job, "--run-dir", runDir, "--run-id", "bench"}
	fmt.Println("prepare: a whole run at the machine's GOMAXPROCS")
	if err := command(bin, nil, args...).Run(); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	procs := procsList(o.maxProcs)
	fmt.Printf("%s, %d CPUs; GOMAXPROCS %v; %s\n", cpuModel(), runtime.NumCPU(), procs, loadAvg())
	if o.machine {
		machineScaling(procs, 3)
	}
	if o.width > 0 {
		c, err := widthCeiling(o.width)
		if err != nil {
			return err
		}
		fmt.Printf("width: an even workload (sections of %d equal tasks, traced at GOMAXPROCS %d) projects %.2f on %d cores over %d (ideal %.2f): read the stages' projections against it\n",
			4*o.width, o.width, c, o.width, runtime.NumCPU(), float64(o.width)/float64(runtime.NumCPU()))
	}
	fmt.Printf("%-26s %3s %8s %8s %5s %7s %7s  %s\n", "stage", "P", "wall_s", "cpu_s", "util", "speedup", "rss_MB", "sha256")
	type summary struct {
		node    string
		speedup float64
	}
	var long []summary
	mismatch := false
	for _, node := range nodes {
		if !only.MatchString(node) {
			continue
		}
		var base measurement
		var sum0 string
		tr := filepath.Join(o.dir, "trace-"+node+".out") // kept, with its .pprof, for go tool trace / pprof
		if o.warm {
			if _, err := measure(bin, append(slices.Clone(args), selectNode(node)...), procs[len(procs)-1], ""); err != nil {
				return fmt.Errorf("%s warm-up: %w", node, err)
			}
		}
		// run measures the node at GOMAXPROCS p (traced when trace is not
		// empty) and hashes its outputs, marking them when they differ from
		// the first run's.
		run := func(p int, trace string) (m measurement, sum, mark string, err error) {
			if m, err = measure(bin, append(slices.Clone(args), selectNode(node)...), p, trace); err != nil {
				return m, "", "", fmt.Errorf("%s at P=%d: %w", node, p, err)
			}
			if sum, err = outputsHash(filepath.Join(runDir, "bench"), node); err != nil { // --run-id bench
				return m, "", "", err
			}
			if sum0 == "" {
				base, sum0 = m, sum
			}
			if sum != sum0 {
				mark, mismatch = "  DIFFERS FROM P=1", true
			}
			return m, sum, mark, nil
		}
		for _, p := range procs {
			trace := ""
			if o.serial && p == 2 {
				trace = tr
			}
			m, sum, mark, err := run(p, trace)
			if err != nil {
				return err
			}
			speedup := base.wall.Seconds() / m.wall.Seconds()
			fmt.Printf("%-26s %3d %8.2f %8.2f %5.2f %7.2f %7.0f  %s%s\n", node, p, m.wall.Seconds(), m.cpu.Seconds(),
				m.cpu.Seconds()/(m.wall.Seconds()*float64(p)), speedup, float64(m.rss)/(1<<20), sum[:16], mark)
			if p == 2 && base.cpu.Seconds() >= o.long {
				long = append(long, summary{node, speedup})
			}
		}
		if o.width > 0 {
			wt := filepath.Join(o.dir, fmt.Sprintf("trace-%s-p%d.out", node, o.width))
			m, sum, mark, err := run(o.width, wt)
			if err != nil {
				return err
			}
			w, err := readTrace(wt, o.width)
			if err != nil {
				return fmt.Errorf("%s: %w", node, err)
			}
			cpus := runtime.NumCPU()
			fmt.Printf("%-26s P=%d on %d cores (traced): wall %.2f s, cpu %.2f s, rss %.0f MB, mean running %.2f, running or runnable %.2f, wall with < %d running %.3f, none running %.3f; projected speedup on %d cores over %d: %.2f  %s%s\n",
				node, o.width, cpus, m.wall.Seconds(), m.cpu.Seconds(), float64(m.rss)/(1<<20), w.Busy(), w.MeanReady(), o.width, w.Short(),
				float64(w.Running()[0])/float64(w.Wall), o.width, cpus, w.Projected(cpus, o.width), sum[:16], mark)
		}
		if o.serial && slices.Contains(procs, 2) {
			s, err := readTrace(tr, 2)
			if err != nil {
				return fmt.Errorf("%s: %w", node, err)
			}
			sh := s.Serial()
			fmt.Printf("%-26s serial share of CPU %.3f (Amdahl bound: speedup %.2f at P=2, %.1f at P=16); wall with < 2 running %.3f\n",
				node, sh, 1/(sh+(1-sh)/2), 1/(sh+(1-sh)/16), s.Short())
		}
	}
	if mismatch {
		return errors.New("a stage's outputs differ between GOMAXPROCS values")
	}
	if len(long) == 0 {
		fmt.Printf("cores: no stage took %g CPU-s at P=1 (or only P=1 was measured)\n", o.long)
		return nil
	}
	worst := slices.MinFunc(long, func(a, b summary) int { return cmp.Compare(a.speedup, b.speedup) })
	names := make([]string, len(long))
	for i, s := range long {
		names[i] = s.node
	}
	fmt.Printf("cores: min speedup %.2f at P=2 over %s (least: %s)\n", worst.speedup, strings.Join(names, ", "), worst.node)
	return nil
}

// selectNode is the run flags that rerun one plan node: "exp.stage" is
// stage of experiment exp, a name without a dot a job-level stage.
func selectNode(node string) []string {
	if exp, stage, ok := strings.Cut(node, "."); ok {
		return []string{"--experiment", exp, "--only", stage, "--force"}
	}
	return []string{"--only", node, "--force"}
}

func command(bin string, env []string, args ...string) *exec.Cmd {
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), env...)
	c.Stderr = nil // JSON logs: not wanted here; failures show the exit status
	return c
}

// measurement is one run's wall and CPU time (user + system) and peak RSS
// in bytes.
type measurement struct {
	wall, cpu time.Duration
	rss       int64
}

// measure runs the binary at GOMAXPROCS procs; with trace not empty under
// the execution tracer and the CPU profiler (its samples land in the
// trace).
func measure(bin string, args []string, procs int, trace string) (measurement, error) {
	if trace != "" {
		args = append(args, "--trace", trace, "--cpuprofile", trace+".pprof")
	}
	c := command(bin, []string{"GOMAXPROCS=" + strconv.Itoa(procs)}, args...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	start := time.Now()
	if err := c.Run(); err != nil {
		return measurement{}, fmt.Errorf("%w: %s", err, lastLine(stderr.String()))
	}
	m := measurement{wall: time.Since(start), cpu: c.ProcessState.UserTime() + c.ProcessState.SystemTime()}
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.rss = int64(ru.Maxrss) * 1024 // KB on Linux
	}
	return m, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// planNodes lists the job's nodes in plan (DAG) order.
func planNodes(bin, job string) ([]string, error) {
	out, err := command(bin, nil, "plan", job).Output()
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	var nodes []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 && (len(f) == 1 || f[1] == "<-") {
			nodes = append(nodes, f[0])
		}
	}
	return nodes, nil
}

// outputsHash is the sha256 over the stage's output files (name and
// content, in name order), its manifest left out (it holds timings). A
// node "exp.stage" writes exp/stage; a job-level node its own name (the
// report also writes metrics.parquet beside the experiments).
func outputsHash(runDir, node string) (string, error) {
	dir := filepath.Join(runDir, node)
	if exp, stage, ok := strings.Cut(node, "."); ok {
		dir = filepath.Join(runDir, exp, stage)
	}
	files := []string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "manifest.json" {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("outputs of %s: %w", node, err)
	}
	if node == "report" {
		files = append(files, filepath.Join(runDir, "metrics.parquet"))
	}
	slices.Sort(files)
	h := sha256.New()
	for _, f := range files {
		// Streamed: read whole, a 1.6 GB feature matrix would stay in this
		// process's RSS, which Linux hands on to the next child as its
		// starting peak (ru_maxrss survives fork and exec).
		rel, _ := filepath.Rel(runDir, f)
		fmt.Fprintf(h, "%s\n", rel)
		r, err := os.Open(f)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// widthCeiling traces, at GOMAXPROCS procs, sections of 4·procs equal
// tasks of arithmetic (the stages' parallel sections through internal/par)
// and returns the speedup on procs cores it projects: what the method
// gives work that would scale perfectly. Below the ideal procs/cores
// because the kernel shares the cores among procs threads unevenly, so a
// section's last tasks finish apart.
func widthCeiling(procs int) (float64, error) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	var buf bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		return 0, err
	}
	out := make([]int, 4*procs)
	for range 40 {
		par.For(len(out), 0, func(_, i int) {
			x := 0
			for j := range 4_000_000 { // a few ms on one core
				x += j ^ x
			}
			out[i] = x
		})
	}
	rtrace.Stop()
	s, err := traceutil.Read(&buf, procs)
	if err != nil {
		return 0, err
	}
	return s.Projected(runtime.NumCPU(), procs), nil
}

// readTrace reads a trace taken at GOMAXPROCS procs (-serial's at 2,
// -width's at W).
func readTrace(trace string, procs int) (*traceutil.Summary, error) {
	f, err := os.Open(trace)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return traceutil.Read(f, procs)
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load average unknown"
	}
	l, _ := strconv.ParseFloat(f[0], 64)
	return fmt.Sprintf("load average %.1f at start (wall times are noise when it exceeds the cores: %s)", l,
		map[bool]string{true: "they are now", false: "not now"}[l > float64(runtime.NumCPU())+0.5*math.Sqrt(float64(runtime.NumCPU()))])
}
