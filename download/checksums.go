package download

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
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
func ParseSums(r io.Reader, src string) (Sums, error) {
	out := Sums{}
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
		out[name] = strings.ToLower(sum)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUsage, src, err)
	}
	return out, nil
}
