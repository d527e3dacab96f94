package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/imagefeat"
)

// TestBadInputExitCodes: every kind of damaged or empty input, and a
// category that matches nothing, is bad input (exit 3: a retry cannot help)
// with a message naming the file and the place, not a failure (exit 1) or
// empty tables that break three stages later.
func TestBadInputExitCodes(t *testing.T) {
	const men = "men-also_bought-image"
	rs := int64(imagefeat.RecordSize(imagefeat.Dim))
	tests := []struct {
		name   string
		damage func(t *testing.T, data string) // changes the copied data set
		args   []string
		stderr []string // substrings of the last line
	}{
		{name: "category typo", args: []string{"--set", "experiments." + men + ".category=Clothing, Shoes & Jewelry > Mne"},
			stderr: []string{"experiment " + men + " has no items in scope", `category "Clothing, Shoes & Jewelry > Mne"`,
				"outside the prefix", `closest category paths in the file: "Clothing, Shoes & Jewelry > Men", `}},
		{name: "no subcategory at depth", args: []string{"--set", "experiments." + men + ".depth=5"},
			stderr: []string{"experiment " + men + " has no items in scope", "without a subcategory at depth 5"}},
		{name: "empty meta file", damage: func(t *testing.T, d string) { write(t, filepath.Join(d, "meta_Demo.json.gz"), "") },
			stderr: []string{"meta_Demo.json.gz holds no product records (0 lines)"}},
		{name: "empty gzip meta file", damage: func(t *testing.T, d string) { writeGzip(t, filepath.Join(d, "meta_Demo.json.gz"), nil) },
			stderr: []string{"meta_Demo.json.gz holds no product records (0 lines)"}},
		{name: "empty image file", damage: func(t *testing.T, d string) { write(t, filepath.Join(d, "image_features_Demo.b"), "") },
			stderr: []string{"image_features_Demo.b holds no image-feature records"}},
		{name: "gzip truncated", damage: func(t *testing.T, d string) { cut(t, filepath.Join(d, "meta_Demo.json.gz"), 80000) },
			stderr: []string{"amazon: meta_Demo.json.gz: corrupt or truncated gzip stream after ", " complete lines (uncompressed byte ", "unexpected EOF"}},
		{name: "gzip corrupt", damage: func(t *testing.T, d string) {
			p := filepath.Join(d, "meta_Demo.json.gz")
			b := readFile(t, p)
			b[len(b)-8] ^= 0xff // the CRC-32 in the trailer
			write(t, p, string(b))
		}, stderr: []string{"amazon: meta_Demo.json.gz: corrupt or truncated gzip stream after ", "gzip: invalid checksum"}},
		{name: ".b gzip truncated", damage: func(t *testing.T, d string) { cut(t, filepath.Join(d, "image_features_Demo.b"), 1<<20) },
			stderr: []string{"imagefeat: image_features_Demo.b: corrupt gzip stream after "}},
		{name: ".b record truncated", damage: func(t *testing.T, d string) {
			p := filepath.Join(d, "image_features_Demo.b")
			write(t, p, string(gunzip(t, p)[:3*rs+100]))
		}, stderr: []string{"imagefeat: image_features_Demo.b: ", "truncated record"}},
		{name: "NaN feature", damage: func(t *testing.T, d string) {
			p := filepath.Join(d, "image_features_Demo.b")
			b := gunzip(t, p)
			binary.LittleEndian.PutUint32(b[2*rs+imagefeat.ASINLen+4*7:], math.Float32bits(float32(math.NaN())))
			write(t, p, string(b))
		}, stderr: []string{"imagefeat: image_features_Demo.b: non-finite value: NaN at byte ", "dim 7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, args := demo(t)
			if tt.damage != nil {
				tt.damage(t, filepath.Join(dir, "amazon"))
			}
			// Ingest and features: every check above happens in one of them.
			args = append(append(args, "--experiment", men, "--run-dir", "r"), tt.args...)
			r := monomer(t, dir, "real", nil, append([]string{"run"}, args...)...)
			last := strings.TrimSpace(r.stderr)
			last = last[strings.LastIndexByte(last, '\n')+1:]
			if r.code != 3 {
				t.Errorf("exit %d, want 3: %s", r.code, last)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(last, s) {
					t.Errorf("message %q lacks %q", last, s)
				}
			}
		})
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cut truncates the file at p to n bytes.
func cut(t *testing.T, p string, n int) {
	t.Helper()
	write(t, p, string(readFile(t, p)[:n]))
}

func gunzip(t *testing.T, p string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(readFile(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeGzip(t *testing.T, p string, b []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	write(t, p, buf.String())
}
