// Package catalogue reads a shop's own catalogue, given as plain tables
// (a job's data.format: catalogue): items with their category paths,
// directed pairs of named relations between them, and text documents about
// them. Each table is Parquet or CSV with a header row (told apart by the
// content, never the name: Parquet starts with "PAR1"; a CSV file may be
// gzip-compressed), its columns found by name and the others ignored.
//
// The readers stream and hand each valid row to the caller; a row that
// breaks the table's rules is handed to the caller as an amazon.Reject
// (file, row, reason) and counted in Stats, for the caller to weigh
// against its reject ratio. Like package amazon they never log and do not
// decide what is bad input for a run; a file that cannot be read as a
// table at all (no such column, not a table) is an error wrapping
// ErrTable. Every string handed over is valid UTF-8 (invalid bytes become
// U+FFFD, as in package amazon) and every id is read by ID, so that a
// table's Parquet and CSV forms give the same rows. Whether an id names an
// item is the caller's to decide: the readers check each table alone.
//
// It owns the tables' columns and rules, and nothing of the experiment:
// the items it reads are scoped, related and kept by the same code as the
// Amazon releases' (amazon.Subcategory, amazon.Keep), so a catalogue holding
// the same data as a 2014 release gives the same tables.
package catalogue
