package download

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/internal/sidefile"
	"monomer/internal/sidefile/sidefiletest"
)

// notes is a user's file in another form: a BSD-format sums line.
var notes = []byte("SHA256 (notes.txt) = " + strings.Repeat("ab", 32) + "\nmy notes\n")

func putNotes(t *testing.T, p, _ string) { must(t, os.WriteFile(p, notes, 0o644)) }

// intruders stand at a side file's name in place of monomer's own.
var intruders = sidefiletest.Intruders(notes)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot is sidefiletest.Snapshot.
func snapshot(t *testing.T, p string) string {
	t.Helper()
	return sidefiletest.Snapshot(t, p)
}

// sideHarness is a server with one good file and a DIR with a victim
// outside it.
type sideHarness struct {
	s            *server
	f            File
	body         []byte
	dir, victim  string
	victimBefore string
}

func newSideHarness(t *testing.T) *sideHarness {
	body := gzFile(t, 11, 2000)
	s := &server{files: map[string][]byte{"/meta_X.json.gz": body}, ranges: true, etag: `"v1"`}
	ts := newServer(t, s)
	h := &sideHarness{s: s, f: file(ts, "meta_X.json.gz"), body: body, dir: t.TempDir()}
	h.victim = filepath.Join(t.TempDir(), "victim.txt")
	must(t, os.WriteFile(h.victim, []byte("twenty-one bytes ok\n"), 0o644))
	h.victimBefore = snapshot(t, h.victim)
	return h
}

// Every side file name of a download, with a link (to a file outside
// DIR), a directory, a pipe or a file of another form at it: Fetch
// refuses with ErrUsage (exit 2) naming it before it asks the server for
// a byte, and the victim and the intruder are as they were.
func TestFetchRefusesForeignSideFiles(t *testing.T) {
	for _, ext := range []string{".part", ".part.meta", ".part.lock", "/" + SumsFile, "/" + SourcesFile, ""} {
		for _, in := range intruders {
			if ext == "" && in.Name == "foreign file" {
				continue // a file at NAME is a present file, checked: other tests
			}
			if ext == "" && (in.Name == "symlink" || in.Name == "hard link") {
				continue // a link to a regular file at NAME is a present file too
			}
			t.Run(cmp.Or(strings.TrimPrefix(ext, "/"), "NAME")+"/"+in.Name, func(t *testing.T) {
				h := newSideHarness(t)
				p := filepath.Join(h.dir, "meta_X.json.gz"+ext)
				if strings.HasPrefix(ext, "/") {
					p = filepath.Join(h.dir, ext[1:])
				}
				in.Put(t, p, h.victim)
				before := snapshot(t, p)
				_, err := Fetch(context.Background(), h.dir, h.f, opts(&sleeps{}))
				if !errors.Is(err, ErrUsage) || !errors.Is(err, sidefile.ErrForeign) || !strings.Contains(err.Error(), p) {
					t.Fatalf("err %v: want ErrUsage naming %s", err, p)
				}
				if len(h.s.reqs) != 0 {
					t.Errorf("requests %q before refusing", h.s.reqs)
				}
				if got := snapshot(t, h.victim); got != h.victimBefore {
					t.Errorf("victim: %s, was %s", got, h.victimBefore)
				}
				if got := snapshot(t, p); got != before {
					t.Errorf("intruder: %s, was %s", got, before)
				}
				if ext != "" {
					if _, err := os.Lstat(filepath.Join(h.dir, "meta_X.json.gz")); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("the file is there: %v", err)
					}
				}
			})
		}
	}
}

// A hard link at NAME.part to a file elsewhere, with a .part.meta made to
// look like monomer's: not appended to.
func TestFetchHardLinkedPart(t *testing.T) {
	h := newSideHarness(t)
	p := filepath.Join(h.dir, "meta_X.json.gz.part")
	must(t, os.Link(h.victim, p))
	must(t, os.WriteFile(p+".meta", []byte(`{"url":"`+h.f.URL+`","etag":"\"v1\"","size":-1}`), 0o644))
	_, err := Fetch(context.Background(), h.dir, h.f, opts(&sleeps{}))
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "hard link") {
		t.Errorf("err %v: want ErrUsage naming a hard link", err)
	}
	if got := snapshot(t, h.victim); got != h.victimBefore {
		t.Errorf("victim: %s, was %s", got, h.victimBefore)
	}
}

// An empty .part that is a second name of someone's empty file, with a
// .part.meta or without, is refused and keeps its name: the empty .part
// monomer removes is only ever its own.
func TestFetchEmptyHardLinkedPart(t *testing.T) {
	for _, withMeta := range []bool{false, true} {
		h := newSideHarness(t)
		empty := filepath.Join(t.TempDir(), "empty")
		must(t, os.WriteFile(empty, nil, 0o644))
		p := filepath.Join(h.dir, "meta_X.json.gz.part")
		must(t, os.Link(empty, p))
		if withMeta {
			must(t, os.WriteFile(p+".meta", []byte(`{"url":"`+h.f.URL+`","etag":"\"v1\"","size":-1}`), 0o644))
		}
		_, err := Fetch(context.Background(), h.dir, h.f, opts(&sleeps{}))
		if !errors.Is(err, ErrUsage) {
			t.Errorf("meta %v: err %v, want ErrUsage", withMeta, err)
		}
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("meta %v: the hard-linked .part was removed: %v", withMeta, err)
		}
	}
}

// A .part with bytes but no .part.meta is not known to be monomer's: it is
// refused, not continued (appended to) nor restarted (truncated). An
// empty one (left by a Fetch killed before the server answered) is used.
func TestFetchBarePart(t *testing.T) {
	h := newSideHarness(t)
	p := filepath.Join(h.dir, "meta_X.json.gz.part")
	must(t, os.WriteFile(p, h.body[:21], 0o644))
	before := snapshot(t, p)
	if _, err := Fetch(context.Background(), h.dir, h.f, opts(&sleeps{})); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "no meta_X.json.gz.part.meta") {
		t.Fatalf("err %v: want ErrUsage naming the missing .part.meta", err)
	}
	if got := snapshot(t, p); got != before || len(h.s.reqs) != 0 {
		t.Errorf(".part %s, was %s; requests %q", got, before, h.s.reqs)
	}
	must(t, os.Truncate(p, 0))
	if _, err := Fetch(context.Background(), h.dir, h.f, opts(&sleeps{})); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, h.dir, "meta_X.json.gz", h.body)
}

// A .bad name already taken (the user's notes, a link, a directory, a
// pipe, an earlier run's .bad) is kept: the bytes that failed go to the
// first free NAME.bad.N, which the error names.
func TestFetchBadNameTaken(t *testing.T) {
	for _, in := range intruders {
		t.Run(in.Name, func(t *testing.T) {
			h := newSideHarness(t)
			h.f.SHA256 = strings.Repeat("1", 64)
			bad := filepath.Join(h.dir, "meta_X.json.gz.bad")
			in.Put(t, bad, h.victim)
			putNotes(t, bad+".1", "")
			before, before1 := snapshot(t, bad), snapshot(t, bad+".1")
			_, err := Fetch(context.Background(), h.dir, h.f, opts(&sleeps{}))
			if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), bad+".2") {
				t.Fatalf("err %v: want ErrMismatch naming %s.2", err, bad)
			}
			if got := snapshot(t, bad); got != before {
				t.Errorf(".bad: %s, was %s", got, before)
			}
			if got := snapshot(t, bad+".1"); got != before1 {
				t.Errorf(".bad.1: %s, was %s", got, before1)
			}
			if got := snapshot(t, bad+".2"); got != "file "+sum(h.body) {
				t.Errorf(".bad.2: %s, want the served bytes", got)
			}
			if got := snapshot(t, h.victim); got != h.victimBefore {
				t.Errorf("victim: %s, was %s", got, h.victimBefore)
			}
		})
	}
}

// The record of a .part is written through a new temporary file: a link
// at the name an earlier monomer used for it (NAME.part.meta.tmp) is not
// written through.
func TestFetchMetaTemporary(t *testing.T) {
	h := newSideHarness(t)
	tmp := filepath.Join(h.dir, "meta_X.json.gz.part.meta.tmp")
	must(t, os.Symlink(h.victim, tmp))
	if _, err := Fetch(context.Background(), h.dir, h.f, opts(&sleeps{})); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, h.victim); got != h.victimBefore {
		t.Errorf("victim: %s, was %s", got, h.victimBefore)
	}
	if got := snapshot(t, tmp); got != "link to "+h.victim {
		t.Errorf("the link: %s", got)
	}
}

// A user's own SHA256SUMS and SOURCES.tsv (another form: BSD tags, their
// own columns) are never appended to; monomer writes its own files, and a
// second run over the same DIR passes, with a warning that it did not read
// them.
func TestFetchUserSumsFile(t *testing.T) {
	h := newSideHarness(t)
	sums, sources := filepath.Join(h.dir, "SHA256SUMS"), filepath.Join(h.dir, "SOURCES.tsv")
	putNotes(t, sums, "")
	must(t, os.WriteFile(sources, []byte("name\towner\n"), 0o644))
	beforeSums, beforeSources := snapshot(t, sums), snapshot(t, sources)
	if _, err := Fetch(context.Background(), h.dir, h.f, opts(&sleeps{})); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, h.dir, "meta_X.json.gz", h.body)
	src, _ := os.ReadFile(filepath.Join(h.dir, SourcesFile))
	if want := "meta_X.json.gz\t\t" + h.f.URL + "\n"; string(src) != want {
		t.Errorf("%s = %q, want %q", SourcesFile, src, want)
	}
	var warns []string
	o := opts(&sleeps{})
	o.Event = func(e Event) {
		if e.Kind == "warn" {
			warns = append(warns, e.Err.Error())
		}
	}
	res, err := Fetch(context.Background(), h.dir, h.f, o)
	if err != nil || !res.Present || res.SHA256 != sum(h.body) {
		t.Fatalf("second run: %+v %v", res, err)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], sources) || !strings.Contains(warns[1], sums) {
		t.Errorf("warnings %q, want one naming each of the user's files", warns)
	}
	if snapshot(t, sums) != beforeSums || snapshot(t, sources) != beforeSources {
		t.Error("the user's files changed")
	}
}

// The SHA256SUMS and SOURCES.tsv an earlier monomer wrote (every line in
// its form) are still read: a present file is checked against the sum
// recorded there, and against the release recorded there.
func TestFetchLegacySumsFile(t *testing.T) {
	h := newSideHarness(t)
	dst := filepath.Join(h.dir, h.f.Name)
	must(t, os.WriteFile(dst, h.body[:100], 0o644))
	legacy := filepath.Join(h.dir, "SHA256SUMS")
	must(t, os.WriteFile(legacy, []byte(sum(h.body)+"  "+h.f.Name+"\n"), 0o644))
	_, err := Fetch(context.Background(), h.dir, h.f, opts(&sleeps{}))
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), legacy) || !strings.Contains(err.Error(), sum(h.body)) {
		t.Errorf("err %v: want ErrMismatch naming %s and its sum", err, legacy)
	}
	must(t, os.WriteFile(filepath.Join(h.dir, "SOURCES.tsv"), []byte(h.f.Name+"\t2018\t"+h.f.URL+"\n"), 0o644))
	h.f.Release = "2014"
	_, err = Fetch(context.Background(), h.dir, h.f, opts(&sleeps{}))
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "release 2018") {
		t.Errorf("err %v: want ErrMismatch naming release 2018", err)
	}
	if b, _ := os.ReadFile(legacy); string(b) != sum(h.body)+"  "+h.f.Name+"\n" {
		t.Errorf("legacy sums now %q", b)
	}
	// A rerun over the folder an earlier monomer filled: passes, and new
	// sums go to monomer's own file.
	must(t, os.WriteFile(dst, h.body, 0o644))
	h.f.Release = "2018"
	if res, err := Fetch(context.Background(), h.dir, h.f, opts(&sleeps{})); err != nil || !res.Present || res.SHA256 != sum(h.body) {
		t.Errorf("rerun: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, SumsFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s written for a present file: %v", SumsFile, err)
	}
}

// Two downloads into one DIR append their lines to monomer's own sums
// file, which sha256sum -c reads: the lines are in its format.
func TestFetchSumsFileFormat(t *testing.T) {
	h := newSideHarness(t)
	other := gzFile(t, 12, 500)
	h.s.files["/reviews_X.json.gz"] = other
	for _, f := range []File{h.f, {Name: "reviews_X.json.gz", URL: strings.TrimSuffix(h.f.URL, "meta_X.json.gz") + "reviews_X.json.gz", Size: -1}} {
		if _, err := Fetch(context.Background(), h.dir, f, opts(&sleeps{})); err != nil {
			t.Fatal(err)
		}
	}
	want := fmt.Sprintf("%s  meta_X.json.gz\n%s  reviews_X.json.gz\n", sum(h.body), sum(other))
	if got := readSums(t, h.dir); got != want {
		t.Errorf("%s = %q, want %q", SumsFile, got, want)
	}
	in, err := os.Open(filepath.Join(h.dir, SumsFile))
	must(t, err)
	defer in.Close()
	if s, err := ParseSums(in, SumsFile); err != nil || len(s) != 2 {
		t.Errorf("ParseSums: %v %v", s, err)
	}
}

// A link, a directory or a pipe at the names an older monomer appended to
// (SHA256SUMS, SOURCES.tsv) is not read (a pipe would block) nor written:
// the download passes with a warning.
func TestFetchLegacyNamesForeign(t *testing.T) {
	for _, in := range intruders {
		t.Run(in.Name, func(t *testing.T) {
			h := newSideHarness(t)
			sums, sources := filepath.Join(h.dir, "SHA256SUMS"), filepath.Join(h.dir, "SOURCES.tsv")
			in.Put(t, sums, h.victim)
			in.Put(t, sources, h.victim)
			before := snapshot(t, sums) + snapshot(t, sources)
			if _, err := Fetch(context.Background(), h.dir, h.f, opts(&sleeps{})); err != nil {
				t.Fatal(err)
			}
			var warns int
			o := opts(&sleeps{})
			o.Event = func(e Event) {
				if e.Kind == "warn" {
					warns++
				}
			}
			if res, err := Fetch(context.Background(), h.dir, h.f, o); err != nil || !res.Present || warns != 2 {
				t.Errorf("second run: %+v %v, %d warnings, want 2", res, err, warns)
			}
			if got := snapshot(t, sums) + snapshot(t, sources); got != before {
				t.Errorf("now %s, was %s", got, before)
			}
			if got := snapshot(t, h.victim); got != h.victimBefore {
				t.Errorf("victim: %s, was %s", got, h.victimBefore)
			}
		})
	}
}
