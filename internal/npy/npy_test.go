package npy

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The files' bytes are numpy.save's for the same arrays (np.save of
// np.array([[1, 2], [3, -0.5]], '<f4'), of np.array([0.25], '<f8') and
// of np.array(['ab', 'é'])).
func TestBytes(t *testing.T) {
	dir := t.TempDir()
	pad := func(dict string) string {
		n := 64 - (10+len(dict)+1)%64
		return dict + string(bytes.Repeat([]byte(" "), n%64)) + "\n"
	}
	for _, tc := range []struct {
		name  string
		write func(p string) error
		dict  string
		body  []byte
	}{
		{"f4", func(p string) error { return WriteFloat32(p, []float32{1, 2, 3, -0.5}, 2, 2) },
			"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
			[]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0, 0xbf}},
		{"f8", func(p string) error { return WriteFloat64(p, []float64{0.25}) },
			"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
			[]byte{0, 0, 0, 0, 0, 0, 0xd0, 0x3f}},
		{"U", func(p string) error { return WriteStrings(p, []string{"ab", "é"}) },
			"{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }",
			[]byte{'a', 0, 0, 0, 'b', 0, 0, 0, 0xe9, 0, 0, 0, 0, 0, 0, 0}},
	} {
		p := filepath.Join(dir, tc.name+".npy")
		if err := tc.write(p); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		h := pad(tc.dict)
		want := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
		want = append(append(want, h...), tc.body...)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, want)
		}
		if (10+len(h))%64 != 0 {
			t.Errorf("%s: data starts at %d", tc.name, 10+len(h))
		}
		// A second write to the same name is refused: it is never replaced.
		if err := tc.write(p); err == nil {
			t.Errorf("%s: rewrote an existing file", tc.name)
		}
	}
}
