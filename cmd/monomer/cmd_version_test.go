package main

import (
	"bytes"
	"context"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"monomer/models"
)

// TestVersion: --version, the version command and --help print the build's
// version, the Go version and the BLAS.
func TestVersion(t *testing.T) {
	want := regexp.MustCompile(`monomer (\(devel\)|v\S+|commit [0-9a-f]+\S*) ` + regexp.QuoteMeta(runtime.Version()) + ` \S+/\S+, blas ` + regexp.QuoteMeta(models.BLAS().String()))
	for _, args := range [][]string{{"--version"}, {"version"}, {"--help"}} {
		var out bytes.Buffer
		root := newRootCommand()
		root.SetOut(&out)
		if err := execute(context.Background(), root, args); err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		if !want.MatchString(out.String()) {
			t.Errorf("%s printed %q, want a line matching %s", strings.Join(args, " "), out.String(), want)
		}
	}
}
