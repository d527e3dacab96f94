// Command monomer runs the item-compatibility pipeline: one subcommand per
// file (cmd_<name>.go), each built by its newXCommand with its own flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"monomer/amazon"
	"monomer/download"
	"monomer/imagefeat"
	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// Exit codes; the one place errors become codes. Listed in --help and in
// docs/running.md's table (TestREADMEExitCodes checks both against these). A code
// answers a scheduler's question "will a retry help?": 2 and 3 never (the
// same command line, job and data fail the same way), 1, 4, 5 and 130 may.
const (
	exitOK           = 0
	exitFailure      = 1
	exitUsage        = 2
	exitBadInput     = 3
	exitLocked       = 4
	exitInputMissing = 5
	exitInterrupted  = 130
)

const exitCodesHelp = `Exit codes:
  0    success, or everything up to date
  1    failure (diff: the run directories differ; verify: an output
       differs or a stage is not up to date; status --check: a stage is
       stale or missing)
  2    usage error or invalid job file, a data path that is a directory or
       a device, a --run-dir that cannot be created (run, verify: or
       written, as on a read-only file system), or a store folder
       (MONOMER_STORE) that is not a monomer store
       (diff: a table or manifest could not be read, or a directory is not a
       run directory)
  3    bad input: rejects over the threshold, a corrupt or truncated file
       (gzip, .b record), a data path that is a symbolic link loop, a NaN
       or infinite feature, an empty input file or an experiment with
       nothing in scope (download: a file the server refuses, 404 or 403,
       or a checksum mismatch)
  4    run directory locked by another run (download: the file is being
       fetched into the same directory by another download)
  5    an input data file does not exist (yet): a retry may find it
       (download: a network failure, a timeout or a 5xx answer)
  130  interrupted (SIGINT or SIGTERM)
A retry may succeed after 1, 4, 5 or 130, never after 2 or 3.`

// globalOptions are the root command's persistent flags.
type globalOptions struct {
	// blasKernel is --blas-kernel; it overrides MONOMER_BLAS_KERNEL and the
	// job's blas_kernel (blasChoice).
	blasKernel string
}

// newRootCommand builds the command tree afresh, with its own flag values,
// so each test gets commands in their initial state.
func newRootCommand() *cobra.Command {
	var g globalOptions
	root := &cobra.Command{
		Use:   "monomer",
		Short: "Item-compatibility models (WNN, CT, LMT, Monomer, LDA+WNN) from raw Amazon data",
		Long: `monomer turns raw Amazon product data into trained item-compatibility
models and Parquet outputs, reproducing He, Packer & McAuley (ICDM 2016).

Version: ` + versionLine() + `

` + exitCodesHelp,
		Version:       versionLine(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.blasKernel, "blas-kernel", "",
		`OpenBLAS CPU kernel: auto (widest the CPU supports), env (keep OPENBLAS_CORETYPE) or a name such as Haswell; overrides MONOMER_BLAS_KERNEL and the job's blas_kernel`)
	// --version prints the same line as the version command.
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%w: %v", pipeline.ErrUsage, err)
	})
	root.AddCommand(
		newBLASCommand(&g),
		newBowShardCommand(&g),
		newCacheCommand(&g),
		newDiffCommand(),
		newDownloadCommand(),
		newGenCommand(),
		newPlanCommand(),
		newRecommendCommand(),
		newRunCommand(&g),
		newShowCommand(),
		newStatusCommand(&g),
		newVerifyCommand(&g),
		newVersionCommand(),
	)
	return root
}

// usageError is an error of cobra's own text that is a usage error.
type usageError struct{ err error }

func (e usageError) Error() string   { return e.err.Error() }
func (e usageError) Unwrap() []error { return []error{pipeline.ErrUsage, e.err} }

// execute runs the command line args. The root command runs nothing
// itself, so an error attributed to it is about the command line: cobra's
// unknown subcommand, whose error cobra makes without a wrappable cause, is
// marked a usage error here, and exitCode needs no text matching.
func execute(ctx context.Context, root *cobra.Command, args []string) error {
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && cmd == root && !errors.Is(err, pipeline.ErrUsage) && !errors.Is(err, job.ErrUsage) {
		return usageError{err}
	}
	return err
}

func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, job.ErrConfig), errors.Is(err, job.ErrUsage),
		errors.Is(err, pipeline.ErrUsage), errors.Is(err, pipeline.ErrUnreadable),
		errors.Is(err, download.ErrUsage),
		errors.Is(err, cache.ErrNotStore):
		return exitUsage
	case errors.Is(err, pipeline.ErrBadInput),
		// The readers' sentinels for damaged files: the same file fails
		// the same way on a retry, so a scheduler must not retry.
		errors.Is(err, amazon.ErrCorrupt),
		errors.Is(err, imagefeat.ErrCorrupt), errors.Is(err, imagefeat.ErrTruncated),
		errors.Is(err, imagefeat.ErrASIN), errors.Is(err, imagefeat.ErrNonFinite),
		errors.Is(err, imagefeat.ErrDim), errors.Is(err, schema.ErrDamaged),
		// A file the server refuses or whose bytes are not the known
		// ones: asking again gets the same answer.
		errors.Is(err, download.ErrNotFound), errors.Is(err, download.ErrMismatch),
		errors.Is(err, download.ErrCorrupt):
		return exitBadInput
	case errors.Is(err, pipeline.ErrLocked), errors.Is(err, download.ErrLocked):
		return exitLocked
	case errors.Is(err, pipeline.ErrMissingInput), errors.Is(err, download.ErrUnavailable):
		return exitInputMissing
	}
	return exitFailure
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := execute(ctx, newRootCommand(), os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "monomer:", err)
	}
	os.Exit(exitCode(err))
}
