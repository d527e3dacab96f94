// Package download fetches the public Amazon product-data files the
// pipeline reads, by release and category, resuming interrupted transfers
// and verifying what arrives.
//
// A Release knows its publisher's layout: which files a category has
// (metadata, reviews, 5-core reviews, image features), where they sit below
// the release's origin, and the sizes and SHA-256 sums this project could
// find for them. Files lists what a command line asks for; Fetch writes one
// file to DIR/NAME.part, continues it with an HTTP Range request after an
// interruption (in the same call, with bounded retries and backoff, or in a
// later one), verifies it (a length the server announced or confirmed,
// the size and SHA-256 where known, a gzip stream read to its end, a .b
// file a whole number of records, gzipped or not) and only then renames it
// to DIR/NAME and appends its sum to DIR/MONOMER.SHA256SUMS and its release
// and URL to DIR/MONOMER.SOURCES.tsv. A resume names the file it continues
// (If-Range, from DIR/NAME.part.meta); DIR/NAME.part.lock keeps two
// processes from fetching one file; a file already at DIR/NAME is checked
// against what is known of it (Fetch's doc). These side files are never
// opened through a link, and one not in monomer's form is refused and left
// as it is (sidefile.go).
//
// Errors answer a scheduler's question "will a retry help?": ErrUnavailable
// (network failures, timeouts, 5xx answers once the retries are spent) and
// ErrLocked (another process is fetching the file) may go away;
// ErrNotFound (404, 403, 410), ErrMismatch and ErrCorrupt will not.
// The package does not log: Fetch reports what it does through
// Options.Event and Options.Progress.
package download
