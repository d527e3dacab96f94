package repocheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLargeFilesLint runs .ci/large-files on a temporary repository: a
// staged file over the limit fails it, named, wherever it is but under a
// testdata/ directory (at any depth); one at the limit, or untracked,
// passes.
func TestLargeFilesLint(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	script, err := filepath.Abs("../../.ci/large-files")
	if err != nil {
		t.Fatal(err)
	}
	const limit = 1000
	for _, tc := range []struct {
		name  string
		files map[string]int // staged: path → size
		loose map[string]int // written, not staged
		want  []string       // paths named; none: passes
	}{
		{name: "small", files: map[string]int{"a.go": 10, "docs/x.png": limit}},
		{name: "binary at the root", files: map[string]int{"a.go": 10, "benchsparse": limit + 1}, want: []string{"benchsparse"}},
		{name: "testdata", files: map[string]int{"testdata/big.gz": 5 * limit, "models/testdata/deep/big.json": 5 * limit}},
		{name: "not testdata", files: map[string]int{"mytestdata/big": limit + 1, "testdata.bin": limit + 1, "docs/a b.png": limit + 1},
			want: []string{"mytestdata/big", "testdata.bin", "docs/a b.png"}},
		{name: "untracked", loose: map[string]int{"out/big": 5 * limit}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			git := func(args ...string) {
				cmd := exec.Command("git", args...)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			git("init", "-q")
			write := func(files map[string]int) {
				for p, n := range files {
					path := filepath.Join(dir, p)
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(strings.Repeat("x", n)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			write(tc.files)
			git("add", "-A")
			write(tc.loose)
			cmd := exec.Command(script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LIMIT=1000")
			out, err := cmd.CombinedOutput()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("failed: %v\n%s", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("passed, want it to name %q\n%s", tc.want, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != len(tc.want) {
				t.Errorf("output %q, want one line for each of %q", out, tc.want)
			}
			for _, p := range tc.want {
				if !strings.Contains(string(out), "large file: "+p+" (") {
					t.Errorf("output %q does not name %s", out, p)
				}
			}
		})
	}
}

// TestRepositoryHasNoLargeFile runs the lint on this repository, as `make
// lint` does.
func TestRepositoryHasNoLargeFile(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	cmd := exec.Command("../../.ci/large-files")
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "not a git repository") {
			t.Skip("not in a git checkout")
		}
		t.Fatalf("%v\n%s", err, out)
	}
}
