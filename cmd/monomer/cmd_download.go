package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"monomer/download"
	"monomer/internal/nearest"
	"monomer/job"
	"monomer/pipeline"
)

type downloadFlags struct {
	release    string
	categories []string
	what       []string
	out        string
	mirror     string
	checksums  string
	list       bool
	retries    int
}

// downloadOptions, when set, adjusts the fetch options: the tests use it
// to record the backoff instead of sleeping. nil in the binary.
var downloadOptions func(*download.Options)

func newDownloadCommand() *cobra.Command {
	var flags downloadFlags
	cmd := &cobra.Command{
		Use:   "download --release 2014|2018|2023 --category NAME [--category NAME]... [--what meta,reviews,5core,image_features] --out DIR [--mirror URL] [--checksums FILE] [--list]",
		Short: "Fetch the public Amazon data files of a release's categories, resumably and verified",
		Long: `download fetches the per-category files of a public release of the Amazon
product data into DIR under the names the job files use:

  2014  meta_C.json.gz, reviews_C.json.gz, reviews_C_5.json.gz (5core) and
        image_features_C.b (the paper's data; the .b files are the only public
        copy of the CNN features the paper used), from snap.stanford.edu
  2018  meta_C.json.gz, C.json.gz, C_5.json.gz (5core), from mcauleylab.ucsd.edu
  2023  meta_C.jsonl.gz, C.jsonl.gz (Amazon Reviews'23), from mcauleylab.ucsd.edu;
        no also_bought/also_viewed lists and no image features

--category takes the release's own names (Clothing_Shoes_and_Jewelry,
Electronics, ...; an unknown one lists them). --what defaults to what the
jobs read: meta,reviews,image_features for 2014, meta,reviews otherwise.
--list prints the URL, file name and expected size ("?" if unknown) of each
file, one a line, and fetches nothing. --mirror URL replaces the release's
origin (http, https or file://), keeping each file's path below it; a user
name and password in it are sent, and shown nowhere.

Each file arrives in DIR/NAME.part and is continued with an HTTP Range
request after an interruption, by the same run (up to --retries attempts in
a row without progress, with backoff) or the next. It is renamed to DIR/NAME
only when complete and verified: a length the server announced or confirmed
(a body without one ends only when a request for the bytes after it is
answered 416; else exit 5, the .part kept) and any known size, the SHA-256
where known (the project ships the sums it could find, and a few sizes;
--checksums FILE, sha256sum format, replaces both and must give the sum of
one of the files, /dev/null trusts the server), a gzip stream read to its
end, a .b file a whole number of records (gzipped or not). A mismatch keeps
the bytes as DIR/NAME.bad (NAME.bad.1, ... if that is taken) and exits 3.
Each fetched file's sum is appended to DIR/MONOMER.SHA256SUMS (sha256sum -c
reads it) and its release and URL to DIR/MONOMER.SOURCES.tsv; a SHA256SUMS
or SOURCES.tsv of the user's in DIR is never written (one an older monomer
wrote is still read).
DIR/NAME.part.meta records the URL, ETag and Last-Modified a .part came
from; a resume sends them as If-Range, so a file changed on the server
starts again from byte 0, and a .part from another --mirror is kept only if
that mirror's Last-Modified is the same; a server that sends neither
validator gets its .part started again (unless the SHA-256 is known).
DIR/NAME.part.lock is held while a file is fetched: a second download of it
into DIR exits 4 naming the holder. A link, a directory, a pipe or a file
not in monomer's form at one of these names exits 2 naming it, and is left
as it is.

A file already at DIR/NAME is not fetched again but checked, and left in
place: a release other than the one MONOMER.SOURCES.tsv records for it (2014 and
2018 metadata files share their names: use another --out), a size other than
a known one, or a SHA-256 other than the known one (or its line in
DIR/MONOMER.SHA256SUMS), or with no sum known a file not whole by its format, exits
3; something not a file at DIR/NAME exits 2. Checking reads the whole file
(tens of seconds for a multi-GB file), and says so in a log line. A progress
bar per file on a terminal, JSON log lines otherwise.

` + exitCodesHelp,
		Example: `  monomer download --release 2014 --category Clothing_Shoes_and_Jewelry --out data/amazon
  monomer download --release 2014 --category Electronics --what meta,reviews --out data/amazon
  monomer download --release 2023 --category Electronics --list
  monomer download --release 2014 --category Baby --mirror file:///mnt/amazon-2014 --out data/amazon`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDownload(cmd, &flags) },
	}
	f := cmd.Flags()
	f.StringVar(&flags.release, "release", "", "release: 2014, 2018 or 2023 (required)")
	f.StringSliceVar(&flags.categories, "category", nil, "category, as the release names it (repeatable; required)")
	f.StringSliceVar(&flags.what, "what", nil, "kinds of file: meta, reviews, 5core, image_features (default: what the jobs read)")
	f.StringVar(&flags.out, "out", "", "directory for the files, created if missing (required unless --list)")
	f.StringVar(&flags.mirror, "mirror", "", "fetch from this URL instead of the release's origin, the same paths below it")
	f.StringVar(&flags.checksums, "checksums", "", "SHA-256 sums to verify against, sha256sum format (default: the ones shipped for the release)")
	f.BoolVar(&flags.list, "list", false, "print URL, file name and expected size of each file; fetch nothing")
	f.IntVar(&flags.retries, "retries", 5, "attempts in a row without progress before giving up on a file (0: none)")
	return cmd
}

func runDownload(cmd *cobra.Command, flags *downloadFlags) error {
	if flags.release == "" {
		return fmt.Errorf("%w: download needs --release (2014, 2018 or 2023)", pipeline.ErrUsage)
	}
	rel, err := download.Lookup(flags.release)
	if err != nil {
		return err
	}
	req := download.Request{Categories: flags.categories, Kinds: flags.what, Mirror: flags.mirror}
	if flags.checksums != "" {
		in, err := os.Open(flags.checksums)
		if err != nil {
			return fmt.Errorf("%w: --checksums: %v", pipeline.ErrUsage, err)
		}
		req.Sums, err = download.ReadSums(in, flags.checksums)
		in.Close()
		if err != nil {
			return err
		}
	}
	files, err := rel.Files(req)
	if err != nil {
		return err
	}
	if err := req.Sums.Covers(files, flags.checksums); err != nil {
		return err
	}
	if flags.list {
		w := cmd.OutOrStdout()
		for _, f := range files {
			size := "?"
			if f.Size >= 0 {
				size = strconv.FormatInt(f.Size, 10)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\n", f.SafeURL(), f.Name, size)
		}
		return nil
	}
	if flags.out == "" {
		return fmt.Errorf("%w: download needs --out DIR (or --list)", pipeline.ErrUsage)
	}
	if flags.retries < 0 {
		return fmt.Errorf("%w: --retries %d must be at least 0", pipeline.ErrUsage, flags.retries)
	}
	if err := os.MkdirAll(flags.out, 0o755); err != nil {
		return fmt.Errorf("%w: --out: %v", pipeline.ErrUsage, err)
	}
	term := pipeline.IsTerminal(os.Stderr)
	log := pipeline.NewLogger(cmd.ErrOrStderr(), term).With(slog.String("release", rel.Name))
	opt := download.Options{Retries: flags.retries}
	if flags.retries == 0 {
		opt.Retries = -1
	}
	var bar *fileBar
	if term {
		bar = &fileBar{w: os.Stderr}
		opt.Progress = bar.progress
	}
	starts := map[string]time.Time{}
	opt.Event = func(e download.Event) {
		if _, ok := starts[e.File.Name]; !ok {
			starts[e.File.Name] = time.Now()
		}
		logEvent(log, bar, e, time.Since(starts[e.File.Name]))
	}
	if downloadOptions != nil {
		downloadOptions(&opt)
	}
	var errs []error
	for _, f := range files {
		if _, err := download.Fetch(cmd.Context(), flags.out, f, opt); err != nil {
			bar.finish()
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			err = outError(err, flags.out)
			log.Error("file failed", slog.String("file", f.Name), slog.String("url", f.SafeURL()), slog.String("error", err.Error()))
			// The other files may still arrive: a scheduler's retry then
			// has less to fetch.
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("download: %d of %d file(s) failed: %w", len(errs), len(files), retryableFirst(errs))
	}
	return nil
}

// retryableFirst joins the failures of several files so that the exit
// code is the one a scheduler should act on, as a run's is: retryable (5)
// when any file may arrive on a retry, which resumes it, else the first
// failure's. Only that one is wrapped; the others' messages follow it.
func retryableFirst(errs []error) error {
	i := slices.IndexFunc(errs, func(e error) bool { return errors.Is(e, download.ErrUnavailable) })
	if i < 0 {
		i = 0
	}
	var rest []string
	for j, e := range errs {
		if j != i {
			rest = append(rest, e.Error())
		}
	}
	if len(rest) == 0 {
		return errs[i]
	}
	return fmt.Errorf("%w; and %s", errs[i], strings.Join(rest, "; "))
}

// outError marks a fetch's failure to write into --out (a read-only disk,
// a folder of another user) a usage error: not the data's fault, and no
// retry mends it.
func outError(err error, out string) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("%w: --out %s: %w (it must be writable by this user to fetch into it)", pipeline.ErrUsage, out, err)
	}
	return err
}

// logEvent logs a fetch's steps: every one as a JSON line off a terminal;
// on a terminal the bar shows the bytes, and the lines say what else
// happened.
func logEvent(log *slog.Logger, bar *fileBar, e download.Event, took time.Duration) {
	f := e.File
	attrs := []any{slog.String("file", f.Name)}
	switch e.Kind {
	case "present":
		log.Info("present, not fetched (delete it to fetch again)", append(attrs, slog.Int64("bytes", e.Total))...)
	case "check":
		log.Info("present: reading it through to check its sha256 (or its format, where no sum is known; delete it to fetch it again instead)", append(attrs, slog.Int64("bytes", e.Total))...)
	case "restart":
		bar.finish()
		log.Warn("throwing away the bytes fetched so far, starting again from byte 0",
			append(attrs, slog.Int64("bytes", e.Offset), slog.String("reason", e.Err.Error()))...)
	case "request":
		bar.start(f, e.Offset, e.Total)
		if bar == nil || e.Resumed {
			log.Info("request", append(attrs, slog.String("url", f.SafeURL()), slog.Int64("offset", e.Offset), slog.Int("attempt", e.Attempt), slog.Bool("resumed", e.Resumed))...)
		}
	case "retry":
		bar.finish()
		log.Warn("attempt failed, retrying", append(attrs, slog.String("error", e.Err.Error()), slog.Int64("offset", e.Offset),
			slog.Int("attempt", e.Attempt), slog.Float64("wait_seconds", e.Wait.Seconds()))...)
	case "warn":
		bar.finish()
		log.Warn(e.Err.Error(), attrs...)
	case "verify":
		bar.finish()
		log.Info("verifying", append(attrs, slog.Int64("bytes", e.Total))...)
	case "done":
		attrs = append(attrs, slog.Int64("bytes", e.Total), slog.Float64("seconds", took.Seconds()),
			slog.Float64("mb_per_s", float64(e.Total)/1e6/max(took.Seconds(), 1e-3)))
		if bar == nil {
			// On a terminal the line stays short; the sum is in MONOMER.SHA256SUMS.
			attrs = append(attrs, slog.String("sha256", e.SHA256))
		}
		log.Info("done", attrs...)
	}
}

// fileBar is a progress bar per file (bytes, rate, time left) on a
// terminal; a nil *fileBar does nothing.
type fileBar struct {
	w    io.Writer
	bar  *progressbar.ProgressBar
	name string
}

func (b *fileBar) start(f download.File, offset, total int64) {
	if b == nil {
		return
	}
	b.finish()
	if total < 0 {
		total = f.Size // -1 (a spinner) when unknown too
	}
	b.name = f.Name
	b.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription(f.Name),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(b.w) }))
	b.bar.Set64(offset)
}

func (b *fileBar) progress(f download.File, done, total int64) {
	if b == nil || b.bar == nil {
		return
	}
	if total >= 0 && b.bar.GetMax64() != total {
		b.bar.ChangeMax64(total)
	}
	b.bar.Set64(done)
}

func (b *fileBar) finish() {
	if b == nil || b.bar == nil {
		return
	}
	if !b.bar.IsFinished() {
		b.bar.Exit()
		fmt.Fprintln(b.w)
	}
	b.bar = nil
}

// withDownloadHint adds to a missing-input error the monomer download
// command lines that would fetch the job's missing data files, where their
// names follow a release's layout (download.Identify).
func withDownloadHint(j *job.Job, err error) error {
	if j == nil || !errors.Is(err, pipeline.ErrMissingInput) {
		return err
	}
	missing := func(p string) bool {
		_, err := os.Stat(p)
		return errors.Is(err, fs.ErrNotExist)
	}
	if near := nearFiles(j, missing); len(near) > 0 {
		err = fmt.Errorf("%w; %s", err, strings.Join(near, "; "))
	}
	cmds := downloadCommands(j, missing)
	if len(cmds) == 0 {
		return err
	}
	return fmt.Errorf("%w; to fetch the missing data: %s", err, strings.Join(cmds, "; "))
}

// nearFiles says, for each of the job's missing data files whose folder
// holds a file of nearly its name, which that is: the name with a suffix
// (".gz"), else its one slip (nearest.Slip). A misspelt
// name is then seen at once rather than retried as data yet to arrive
// (the exit code stays 5: the file meant may be another, still to come).
func nearFiles(j *job.Job, missing func(string) bool) []string {
	var out []string
	seen := map[string]bool{}
	for i := range j.Experiments {
		r := j.Resolve(i)
		for _, p := range dataFiles(&r) {
			if p == "" || seen[p] || !missing(p) {
				continue
			}
			seen[p] = true
			if n := nearFile(p); n != "" {
				out = append(out, fmt.Sprintf("%s is missing but %s is there: did you mean it?", p, n))
			}
		}
	}
	return out
}

// nearFile is the name in p's folder that p nearly names, or "".
func nearFile(p string) string {
	entries, err := os.ReadDir(filepath.Dir(p))
	if err != nil {
		return ""
	}
	base := strings.ToLower(filepath.Base(p))
	var names []string
	for _, e := range entries {
		if e.IsDir() || strings.Contains(e.Name(), ".part") {
			continue // download's unfinished files: rerunning it finishes them
		}
		if strings.HasPrefix(strings.ToLower(e.Name()), base+".") {
			return e.Name()
		}
		names = append(names, e.Name())
	}
	if near, ok := nearest.Slip(base, names); ok {
		return near
	}
	return ""
}

// downloadCommands returns one monomer download command line per release
// and directory for the job's data files that are missing and whose names
// a release's layout gives, in the order the experiments name them.
func downloadCommands(j *job.Job, missing func(string) bool) []string {
	type group struct {
		release, dir string
		cats, kinds  []string
	}
	var groups []*group
	for i := range j.Experiments {
		r := j.Resolve(i)
		files := []string{r.Data.Meta, r.Data.Reviews, r.Data.ImageFeatures}
		// The release a file belongs to: the 2023 one if the job says so;
		// else, since a 2014 and a 2018 metadata file share their name,
		// 2018 if another file of the experiment is 2018's only, 2014 if not.
		prefer := "2014"
		if r.Data.Format == "2023" {
			prefer = "2023"
		} else {
			for _, p := range files {
				if m := download.Identify(filepath.Base(p)); len(m) == 1 && m[0].Release == "2018" {
					prefer = "2018"
				}
			}
		}
		for _, p := range files {
			if p == "" || !missing(p) {
				continue
			}
			var m *download.Match
			for _, c := range download.Identify(filepath.Base(p)) {
				if c.Release == prefer || (m == nil && c.Release != "2023" && prefer != "2023") {
					m = &c
				}
			}
			if m == nil {
				continue
			}
			dir := filepath.Dir(p)
			var g *group
			for _, x := range groups {
				if x.release == m.Release && x.dir == dir {
					g = x
				}
			}
			if g == nil {
				g = &group{release: m.Release, dir: dir}
				groups = append(groups, g)
			}
			if !slices.Contains(g.cats, m.Category) {
				g.cats = append(g.cats, m.Category)
			}
			if !slices.Contains(g.kinds, m.Kind) {
				g.kinds = append(g.kinds, m.Kind)
			}
		}
	}
	var out []string
	for _, g := range groups {
		rel, _ := download.Lookup(g.release)
		var kinds []string
		for _, k := range rel.Kinds {
			if slices.Contains(g.kinds, k) {
				kinds = append(kinds, k)
			}
		}
		line := "monomer download --release " + g.release
		for _, c := range g.cats {
			line += " --category " + c
		}
		out = append(out, line+" --what "+strings.Join(kinds, ",")+" --out "+shellWord(g.dir))
	}
	return out
}

// shellWord quotes s for a POSIX shell when it needs quoting.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r == '+' || r == ':' || r == '=' || r == ',' ||
			('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
