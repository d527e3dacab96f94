package pipeline

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// meminfoPath is read by MachineMemory; tests point it elsewhere.
var meminfoPath = "/proc/meminfo"

// MachineMemory returns the memory a run may use in bytes: MemAvailable of
// /proc/meminfo, or MemTotal on kernels too old to report it. On systems
// without /proc/meminfo (macOS) it returns an error and callers skip their
// memory checks.
func MachineMemory() (int64, error) {
	b, err := os.ReadFile(meminfoPath)
	if err != nil {
		return 0, fmt.Errorf("pipeline: machine memory: %w", err)
	}
	vals := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			v *= 1024
		}
		vals[name] = v
	}
	for _, k := range []string{"MemAvailable", "MemTotal"} {
		if v, ok := vals[k]; ok && v > 0 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("pipeline: machine memory: no MemAvailable or MemTotal in %s", meminfoPath)
}

// GiB formats a byte count for messages: "1.5 GiB".
func GiB(b int64) string {
	return strconv.FormatFloat(float64(b)/(1<<30), 'f', 1, 64) + " GiB"
}
