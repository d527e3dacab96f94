package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"monomer/models"
	"monomer/pipeline/cache"
)

// versionLine is what --version, the version command and --help print:
// the build (module version or commit, Go) and the BLAS this binary links
// (its implementation, version and the CPU kernel loaded).
func versionLine() string {
	return fmt.Sprintf("monomer %s, blas %s", cache.Version(), models.BLAS())
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version: module version or commit, Go version, BLAS",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			printVersion(cmd.OutOrStdout())
			return nil
		},
	}
}

func printVersion(w io.Writer) { fmt.Fprintln(w, versionLine()) }
