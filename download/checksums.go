package download

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Sums are SHA-256 sums in lower-case hex by file name.
type Sums map[string]string

//go:embed checksums/*.sha256
var shipped embed.FS

// Shipped returns the sums this project ships for a release
// (checksums/<release>.sha256), empty where none are known.
func Shipped(release string) Sums {
	b, err := shipped.ReadFile("checksums/" + release + ".sha256")
	if err != nil {
		return Sums{}
	}
	s, err := ParseSums(bytes.NewReader(b), release+".sha256")
	if err != nil {
		// The shipped files are checked by TestShippedSums.
		panic(err)
	}
	return s
}

// ParseSums reads sha256sum's format: "HEX  NAME" (or "HEX *NAME", binary
// mode) a line, blank lines and lines starting with '#' skipped, as
// sha256sum -c skips them. A name keeps only its last path element, since
// the files are matched by destination name. A malformed line is an
// ErrUsage naming src and the line.
func ParseSums(r io.Reader, src string) (Sums, error) { return parseSums(r, src, false) }

// ReadSums reads a sums file a user gives (--checksums) as ParseSums does,
// except that a name listed twice with two sums is an ErrUsage naming both
// lines: which one is meant is the user's to say.
func ReadSums(r io.Reader, src string) (Sums, error) { return parseSums(r, src, true) }

func parseSums(r io.Reader, src string, strict bool) (Sums, error) {
	out := Sums{}
	lineOf := map[string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(strings.TrimPrefix(name, " "), "*")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 64 || name == "" {
			return nil, fmt.Errorf("%w: %s line %d: want \"<64 hex digits>  NAME\", got %q", ErrUsage, src, n, line)
		}
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		sum = strings.ToLower(sum)
		if prev, ok := out[name]; strict && ok && prev != sum {
			return nil, fmt.Errorf("%w: %s line %d: %q has another sum than on line %d", ErrUsage, src, n, name, lineOf[name])
		}
		out[name], lineOf[name] = sum, n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUsage, src, err)
	}
	return out, nil
}

// Covers checks that sums, read from src, are meant for files: that they
// give the sum of at least one of them, and that no name in them differs
// from a file's only in case or by spaces around it (a file matched by
// neither would go unverified without a word). Empty sums (/dev/null:
// trust the server) cover anything. A failure is an ErrUsage.
func (s Sums) Covers(files []File, src string) error {
	if len(s) == 0 {
		return nil
	}
	var near []string
	matched := 0
	for _, f := range files {
		if _, ok := s[f.Name]; ok {
			matched++
			continue
		}
		for name := range s {
			if strings.EqualFold(strings.TrimSpace(name), f.Name) {
				near = append(near, fmt.Sprintf("%q is not %s (names are matched exactly, case and spaces included)", name, f.Name))
			}
		}
	}
	if len(near) > 0 {
		slices.Sort(near)
		return fmt.Errorf("%w: %s: %s", ErrUsage, src, strings.Join(near, "; "))
	}
	if matched == 0 {
		names := slices.Sorted(maps.Keys(s))
		if len(names) > 5 {
			names = append(names[:5], "…")
		}
		want := make([]string, len(files))
		for i, f := range files {
			want[i] = f.Name
		}
		return fmt.Errorf("%w: %s gives the sum of none of the files to fetch (%s); it names %s",
			ErrUsage, src, strings.Join(want, ", "), strings.Join(names, ", "))
	}
	return nil
}
