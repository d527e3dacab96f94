package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"monomer/internal/nearest"
	"monomer/pipeline"
	"monomer/pipeline/cache"
)

// storeDir is the content-addressed store of stage outputs for run
// directories under base: $MONOMER_STORE ("off", in any case, for none),
// else base/.store, shared by every --run-id. A value that looks meant to
// turn the store off but does not (of, none, 0, false) is a usage error
// rather than a store of that name in the working directory: a warning in
// a scheduled run's log goes unread while the folder grows; a folder of
// such a name is still reached as ./none.
func storeDir(base string) (string, error) {
	s := os.Getenv("MONOMER_STORE")
	switch {
	case s == "":
		return filepath.Join(base, ".store"), nil
	case strings.EqualFold(s, "off"):
		return "", nil
	case offLike(s):
		return "", fmt.Errorf("%w: MONOMER_STORE=%s is not off: MONOMER_STORE=off turns the store off; for a folder of that name, write ./%s", pipeline.ErrUsage, s, s)
	}
	return s, nil
}

// offLike reports whether a MONOMER_STORE value is a slip of "off" or a
// word other programs take for "none".
func offLike(s string) bool {
	if _, ok := nearest.Slip(s, []string{"off"}); ok {
		return true
	}
	for _, w := range []string{"none", "no", "false", "0", "disable", "disabled", "null", "nil"} {
		if strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

type cacheTrimFlags struct {
	dirFlags
	max string
}

func newCacheCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Manage the store of stage outputs (see docs/running.md, Caching and code versions)",
	}
	cmd.AddCommand(newCacheTrimCommand(g))
	return cmd
}

func newCacheTrimCommand(g *globalOptions) *cobra.Command {
	var flags cacheTrimFlags
	cmd := &cobra.Command{
		Use:   "trim JOB.yaml [--run-dir DIR] [--max SIZE]",
		Short: "Remove the least recently used stage outputs from the store beyond a size",
		Long: `trim removes the least recently used entries of the job's store of stage
outputs (DIR/.store, or $MONOMER_STORE) until the rest hold at most --max
bytes (units K, M, G, T, also written KB or KiB, with or without a space:
powers of 1024; default 20G, the cap every run applies at its end). --max 0
empties the store. Run directories keep their outputs: the store holds hard
links to them. Only entries the store wrote are removed; a folder that is
not a monomer store (no CACHEDIR.TAG naming monomer) is refused (exit 2).

` + exitCodesHelp,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			max, err := parseSize(flags.max)
			if err != nil {
				return err
			}
			_, opts, err := flags.load(args[0])
			if err != nil {
				return err
			}
			if opts.Store == "" {
				return fmt.Errorf("%w: the store is off (MONOMER_STORE=%s)", pipeline.ErrUsage, os.Getenv("MONOMER_STORE"))
			}
			res, err := cache.Trim(opts.Store, max)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: removed %d entries (%d bytes), kept %d (%d bytes)\n",
				opts.Store, res.Removed, res.RemovedBytes, res.Kept, res.KeptBytes)
			return nil
		},
	}
	flags.register(cmd, g)
	cmd.Flags().StringVar(&flags.max, "max", "20G", "keep at most this many bytes")
	return cmd
}

// parseSize reads a byte count with an optional unit K, M, G or T (powers
// of 1024), written as K, KB or KiB, with or without a space: "20G",
// "20GiB" and "20 GiB" are the same size.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	t := strings.TrimSpace(strings.ToUpper(s))
	t = strings.TrimSuffix(t, "B")
	if n := len(t); n > 1 && t[n-1] == 'I' && strings.IndexByte("KMGT", t[n-2]) >= 0 {
		t = t[:n-1]
	}
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			mult = 1 << (10 * (i + 1))
			t = strings.TrimSpace(t[:n-1])
		}
	}
	v, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("%w: --max %q: want bytes, optionally with a unit K, M, G or T (KB, KiB: all powers of 1024), e.g. 20G or \"20 GiB\"", pipeline.ErrUsage, s)
	}
	return v * mult, nil
}
