// Command monomer runs the item-compatibility pipeline: one subcommand per
// file (cmd_<name>.go), each registering itself on the root command.
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
	"monomer/imagefeat"
	"monomer/job"
	"monomer/pipeline"
)

// Exit codes; the one place errors become codes. Listed in --help and README.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitBadInput    = 3
	exitLocked      = 4
	exitInterrupted = 130
)

const exitCodesHelp = `Exit codes:
  0    success, or everything up to date
  1    failure (diff: the run directories differ; status --check: a stage
       is stale or missing)
  2    usage error or invalid job file (diff: a table or manifest could not
       be read)
  3    bad input: rejects over the threshold, a corrupt or truncated file
       (gzip, .b record), a NaN or infinite feature, an empty input file or
       an experiment with nothing in scope
  4    run directory locked by another run
  130  interrupted (SIGINT or SIGTERM)`

var cmdRoot = &cobra.Command{
	Use:   "monomer",
	Short: "Item-compatibility models (WNN, CT, LMT, Monomer, LDA+WNN) from raw Amazon data",
	Long: `monomer turns raw Amazon product data into trained item-compatibility
models and Parquet outputs, reproducing He, Packer & McAuley (ICDM 2016).

` + exitCodesHelp,
	SilenceUsage:  true,
	SilenceErrors: true,
}

func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, job.ErrConfig), errors.Is(err, pipeline.ErrUsage),
		errors.Is(err, pipeline.ErrUnreadable),
		strings.HasPrefix(err.Error(), "unknown command "): // cobra's, not wrappable
		return exitUsage
	case errors.Is(err, pipeline.ErrBadInput),
		// The readers' sentinels for damaged files: the same file fails
		// the same way on a retry, so a scheduler must not retry.
		errors.Is(err, amazon.ErrCorrupt),
		errors.Is(err, imagefeat.ErrCorrupt), errors.Is(err, imagefeat.ErrTruncated),
		errors.Is(err, imagefeat.ErrASIN), errors.Is(err, imagefeat.ErrNonFinite),
		errors.Is(err, imagefeat.ErrDim):
		return exitBadInput
	case errors.Is(err, pipeline.ErrLocked):
		return exitLocked
	}
	return exitFailure
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmdRoot.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%w: %v", pipeline.ErrUsage, err)
	})
	err := cmdRoot.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "monomer:", err)
	}
	os.Exit(exitCode(err))
}
