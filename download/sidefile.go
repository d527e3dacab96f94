package download

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"monomer/internal/sidefile"
)

// The files Fetch keeps in DIR beside the data files are its own only in
// the form it writes them: a symbolic link, a directory, a pipe or a file
// of another form at one of their names (NAME.part, NAME.part.meta,
// NAME.part.lock, SumsFile, SourcesFile) is refused with ErrUsage naming
// it, and never written, renamed or removed (internal/sidefile).

// SumsFile is the file in DIR to which Fetch appends each fetched file's
// sum, in sha256sum format (so that `sha256sum -c MONOMER.SHA256SUMS`
// checks them later, and --checksums accepts it). It has a name of its
// own: a SHA256SUMS in DIR is the user's, read only when every line is in
// the form monomer wrote there before it had this file (legacySumsFile).
const SumsFile = "MONOMER.SHA256SUMS"

// SourcesFile is the file in DIR to which Fetch appends, for each fetched
// file, "NAME<TAB>RELEASE<TAB>URL": a 2014 and a 2018 metadata file share
// their name, and a file already present must not pass for the other
// release's. A SOURCES.tsv in DIR is read as legacySumsFile is.
const SourcesFile = "MONOMER.SOURCES.tsv"

// The names monomer appended to before it had its own.
const (
	legacySumsFile    = "SHA256SUMS"
	legacySourcesFile = "SOURCES.tsv"
)

// The lines Fetch writes: sum and name, and name, release and URL.
var (
	sumLine    = regexp.MustCompile(`^[0-9a-f]{64}  [^/\t\r\n]+$`)
	sourceLine = regexp.MustCompile(`^[^/\t\r\n]+\t[^\t\r\n]*\t[^\t\r\n]+$`)
)

// sideError makes a file in the way an ErrUsage (exit 2).
func sideError(err error) error {
	if errors.Is(err, sidefile.ErrForeign) && !errors.Is(err, ErrUsage) {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return err
}

// foreign is sideError of a regular file at path whose content is not
// monomer's.
func foreign(path, is string) error { return sideError(sidefile.Foreign(path, is)) }

// present reports whether a data file is at dst, to be checked rather than
// fetched: a regular file, or a link to one (a data folder may link to
// files kept elsewhere). A link to nothing, a directory or a pipe is in
// the way: ErrUsage naming it.
func present(dst string) (bool, error) {
	st, err := os.Lstat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		t, err := os.Stat(dst)
		if err != nil {
			return false, foreign(dst, "a symbolic link to nothing that can be read")
		}
		if !t.Mode().IsRegular() {
			return false, foreign(dst, "a symbolic link to "+sidefile.Kind(t.Mode()))
		}
		return true, nil
	}
	if !st.Mode().IsRegular() {
		return false, foreign(dst, sidefile.Kind(st.Mode()))
	}
	return true, nil
}

// checkSide checks, once the lock is held, that the .part and .part.meta
// at their names are monomer's: a regular .part beside a .part.meta of
// partMeta's JSON. An empty .part alone is taken as one that a killed
// Fetch created before the server's first answer (every version did), and
// a .part.meta alone as one whose .part was never written; an empty .part
// with its .part.meta holds nothing to continue, and both are removed.
func (fe *fetcher) checkSide() error {
	// The sums and sources files too, before a byte is fetched: they are
	// appended to once the file is in place.
	dir := filepath.Dir(fe.part)
	for _, c := range []struct {
		name string
		form *regexp.Regexp
	}{{SumsFile, sumLine}, {SourcesFile, sourceLine}} {
		path := filepath.Join(dir, c.name)
		_, bad, err := readSide(path, c.form)
		if err != nil {
			return sideError(err)
		}
		if bad > 0 {
			return foreign(path, fmt.Sprintf("a file in another form than monomer's (line %d)", bad))
		}
	}
	partErr := sidefile.Check(fe.part)
	if partErr != nil && !errors.Is(partErr, fs.ErrNotExist) {
		return sideError(partErr)
	}
	metaErr := sidefile.Check(fe.meta)
	if metaErr != nil && !errors.Is(metaErr, fs.ErrNotExist) {
		return sideError(metaErr)
	}
	if metaErr == nil {
		b, err := sidefile.ReadFile(fe.meta, 1<<16)
		if err != nil {
			return sideError(err)
		}
		var m partMeta
		if json.Unmarshal(b, &m) != nil || m.URL == "" {
			return foreign(fe.meta, "a file that is not a download's record (not its JSON with a url)")
		}
	}
	if partErr != nil {
		return nil
	}
	n := fileSize(fe.part)
	switch {
	case n > 0 && metaErr != nil:
		return foreign(fe.part, fmt.Sprintf("a file of %d bytes with no %s beside it (if an older monomer left it, delete it to fetch %s again)",
			n, filepath.Base(fe.meta), fe.f.Name))
	case n == 0 && metaErr == nil:
		// The .part first: a kill in between leaves a .part.meta alone.
		if !removeOwnEmpty(fe.part) {
			return foreign(fe.part, "an empty file with more than one name (a hard link), not a download's")
		}
		return os.Remove(fe.meta)
	}
	return nil
}

// removeOwnEmpty removes the empty .part at path when it is a download's
// own: a regular file of one name (sidefile.Open refuses a link, a pipe,
// a hard link), still empty. It reports whether it did.
func removeOwnEmpty(path string) bool {
	f, err := sidefile.Open(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	st, err := f.Stat()
	f.Close()
	if err != nil || st.Size() != 0 {
		return false
	}
	return os.Remove(path) == nil
}

// openPart opens the .part to write to (checkSide's), creating it, and
// only it, when absent: a file put at its name meanwhile is not taken.
func (fe *fetcher) openPart() (*os.File, error) {
	flag := os.O_WRONLY
	if err := sidefile.Check(fe.part); errors.Is(err, fs.ErrNotExist) {
		flag |= os.O_CREATE | os.O_EXCL
	}
	f, err := sidefile.Open(fe.part, flag, 0o644)
	return f, sideError(err)
}

// truncatePart empties the .part through a handle that is not a link's.
func (fe *fetcher) truncatePart() error {
	f, err := fe.openPart()
	if err != nil {
		return err
	}
	err = f.Truncate(0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeMeta writes m to the .part.meta whole or not at all, through a new
// temporary file (never one opened through a link).
func (fe *fetcher) writeMeta(m *partMeta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return sideError(sidefile.WriteAtomic(fe.meta, append(b, '\n'), 0o644))
}

// toBad renames the .part to the first free one of NAME.bad, NAME.bad.1,
// NAME.bad.2, ... for inspection (a .bad already there, the user's or an
// earlier run's, is kept), sets fe.bad to it and removes the .part.meta.
func (fe *fetcher) toBad() error {
	base := fe.bad
	for i := 0; i < 1000; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s.%d", base, i)
		}
		err := sidefile.Rename(fe.part, name)
		if err == nil {
			fe.bad = name
			os.Remove(fe.meta)
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return fmt.Errorf("download: %s: %s and 999 numbered names after it are taken; the bytes stay in %s", fe.f.Name, base, fe.part)
}

// finish renames the verified .part to its name, which must still be free.
func (fe *fetcher) finish(dst string) error {
	err := sidefile.Rename(fe.part, dst)
	if errors.Is(err, fs.ErrExist) {
		return foreign(dst, "a file that appeared while it was fetched (the bytes stay in "+filepath.Base(fe.part)+")")
	}
	return err
}

// readSide reads the lines of the side file at path, each of which must
// be in form. A missing file is no lines; bad is the first line (from 1)
// that is not in form, 0 if all are.
func readSide(path string, form *regexp.Regexp) (lines []string, bad int, err error) {
	b, err := sidefile.ReadFile(path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" && len(b) == 0 {
			break
		}
		if !form.MatchString(l) {
			return nil, i + 1, nil
		}
		lines = append(lines, l)
	}
	return lines, 0, nil
}

// readOwnAndLegacy reads dir's own side file name and, before its lines,
// those of the file legacy that monomer appended to before: the latter
// only when every line of it is in form (else it is the user's, and a
// "warn" event says it is not read).
func readOwnAndLegacy(dir, name, legacy string, form *regexp.Regexp, opt *Options, f File) ([]string, error) {
	own := filepath.Join(dir, name)
	lines, bad, err := readSide(own, form)
	if err != nil {
		return nil, sideError(err)
	}
	if bad > 0 {
		return nil, foreign(own, fmt.Sprintf("a file in another form than monomer's (line %d)", bad))
	}
	old := filepath.Join(dir, legacy)
	prev, bad, err := readSide(old, form)
	switch {
	case errors.Is(err, sidefile.ErrForeign):
		opt.event(Event{Kind: "warn", File: f, Err: fmt.Errorf("%v; not read", err)})
	case err != nil:
		return nil, err
	case bad > 0:
		opt.event(Event{Kind: "warn", File: f, Err: fmt.Errorf("%s line %d is not in the form monomer wrote there: the file is someone else's, not read (monomer keeps its own in %s)", old, bad, name)})
	default:
		lines = append(prev, lines...)
	}
	return lines, nil
}

// recordedSum is the sum dir's sums files record for f (the last line
// naming it), and the file that records it.
func recordedSum(dir string, f File, opt *Options) (sum, from string, err error) {
	own, _, err := readSide(filepath.Join(dir, SumsFile), sumLine)
	if err != nil {
		return "", "", sideError(err)
	}
	lines, err := readOwnAndLegacy(dir, SumsFile, legacySumsFile, sumLine, opt, f)
	if err != nil {
		return "", "", err
	}
	for i, l := range lines {
		if l[66:] == f.Name {
			sum, from = l[:64], legacySumsFile
			if i >= len(lines)-len(own) {
				from = SumsFile
			}
		}
	}
	return sum, filepath.Join(dir, from), nil
}

// source is a file's line in SourcesFile, and the file it is in.
type source struct{ release, url, file string }

// readSources reads dir's sources files, the last line of a name winning.
func readSources(dir string, f File, opt *Options) (map[string]source, error) {
	own, _, err := readSide(filepath.Join(dir, SourcesFile), sourceLine)
	if err != nil {
		return nil, sideError(err)
	}
	lines, err := readOwnAndLegacy(dir, SourcesFile, legacySourcesFile, sourceLine, opt, f)
	if err != nil {
		return nil, err
	}
	out := map[string]source{}
	for i, l := range lines {
		p := strings.Split(l, "\t")
		file := legacySourcesFile
		if i >= len(lines)-len(own) {
			file = SourcesFile
		}
		out[p[0]] = source{p[1], p[2], filepath.Join(dir, file)}
	}
	return out, nil
}

// appendSide appends line to the side file dir/name in one write
// (O_APPEND), so that downloads of other files into dir may append at the
// same time, after checking that every line there is in form.
func appendSide(dir, name string, form *regexp.Regexp, line string) error {
	path := filepath.Join(dir, name)
	out, err := sidefile.Open(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return sideError(err)
	}
	defer out.Close()
	b, err := io.ReadAll(out) // from byte 0: O_APPEND moves only writes
	if err != nil {
		return err
	}
	text := strings.TrimSuffix(string(b), "\n")
	if text != "" {
		for i, l := range strings.Split(text, "\n") {
			if !form.MatchString(l) {
				return foreign(path, fmt.Sprintf("a file in another form than monomer's (line %d)", i+1))
			}
		}
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		line = "\n" + line
	}
	if _, err := out.WriteString(line + "\n"); err != nil {
		return err
	}
	return out.Close()
}
