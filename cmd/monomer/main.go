// Command monomer runs the item-compatibility pipeline: one subcommand per
// file (cmd_<name>.go), each built by its newXCommand with its own flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"monomer/amazon"
	"monomer/download"
	"monomer/imagefeat"
	"monomer/internal/nearest"
	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
	"monomer/stages"
)

// Exit codes; the one place errors become codes. Listed in --help and in
// docs/running.md's table (TestREADMEExitCodes checks both against these). A code
// answers a scheduler's question "will a retry help?": 2, 3 and 6 never (the
// same command line, job and data fail the same way), 1, 4, 5 and 130 may.
const (
	exitOK           = 0
	exitFailure      = 1
	exitUsage        = 2
	exitBadInput     = 3
	exitLocked       = 4
	exitInputMissing = 5
	exitNotPromoted  = 6
	exitInterrupted  = 130
)

const exitCodesHelp = `Exit codes:
  0    success, or everything up to date
  1    failure (diff: the run directories differ; verify: an output
       differs or a stage is not up to date; status --check: a stage is
       stale or missing)
  2    usage error or invalid job file (also an unknown command,
       subcommand or flag), a data path that is a directory or a device,
       a --run-dir that cannot be created (run, verify: or
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
  6    not promoted: a publish gate refused this run's lists, the
       published link stays (see publish/gate.json)
  130  interrupted (SIGINT or SIGTERM)
A retry may succeed after 1, 4, 5 or 130, never after 2, 3 or 6.`

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
		newExportCommand(),
		newGenCommand(),
		newPlanCommand(),
		newRecommendCommand(),
		newRunCommand(&g),
		newScoreCommand(),
		newShowCommand(),
		newStatusCommand(&g),
		newVerifyCommand(&g),
		newVersionCommand(),
	)
	// cobra adds these two when it executes: made here, they get the
	// checks below like every other command.
	root.InitDefaultCompletionCmd()
	root.SetHelpCommand(newHelpCommand())
	strictUsage(root)
	return root
}

// strictUsage makes every usage error of c and the commands below it a
// usage error by type (exit 2, one line): cobra's own argument checks
// (NoArgs, MaximumNArgs) return plain errors, which would exit 1, and a
// command that only groups others (cache, completion, the root) would
// print its help and exit 0 for a misspelt or missing subcommand, so that
// a scheduled "monomer cache trm" would do nothing and report success.
func strictUsage(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictUsage(sub)
	}
	if c.HasSubCommands() && !c.Runnable() {
		c.Args = groupArgs
		c.RunE = func(cmd *cobra.Command, _ []string) error {
			return fmt.Errorf("%w: %s needs a command: %s (see %s --help)", pipeline.ErrUsage,
				cmd.CommandPath(), strings.Join(subcommands(cmd), ", "), cmd.CommandPath())
		}
		return
	}
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			switch {
			case err == nil || errors.Is(err, pipeline.ErrUsage):
				return err
			case len(args) > 0 && check(cmd, nil) == nil && check(cmd, args[:1]) != nil:
				// cobra.NoArgs calls the argument an unknown command.
				return fmt.Errorf("%w: %s takes no arguments, got %q (see %s --help)", pipeline.ErrUsage,
					cmd.CommandPath(), strings.Join(args, " "), cmd.CommandPath())
			}
			return fmt.Errorf("%w: %s: %v (see %s --help)", pipeline.ErrUsage, cmd.CommandPath(), err, cmd.CommandPath())
		}
	}
}

// groupArgs refuses any argument of a command that only groups others:
// the first can only be a subcommand cobra did not find.
func groupArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	names := subcommands(cmd)
	hint := ""
	if near, ok := nearest.Slip(args[0], names); ok {
		hint = "; did you mean " + near + "?"
	}
	return fmt.Errorf("%w: unknown command %q for %q%s (commands: %s)", pipeline.ErrUsage,
		args[0], cmd.CommandPath(), hint, strings.Join(names, ", "))
}

// subcommands names the commands below cmd that --help lists.
func subcommands(cmd *cobra.Command) []string {
	var names []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() || s.Name() == "help" {
			names = append(names, s.Name())
		}
	}
	return names
}

// newHelpCommand is cobra's help command, except that a topic it does not
// know is a usage error (cobra's prints the root's usage and exits 0).
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := cmd.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return fmt.Errorf("%w: help: unknown command %q (commands: %s)", pipeline.ErrUsage,
					strings.Join(args, " "), strings.Join(subcommands(cmd.Root()), ", "))
			}
			return target.Help()
		},
	}
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
	case errors.Is(err, stages.ErrNotPromoted):
		return exitNotPromoted
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
