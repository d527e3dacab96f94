// Package schema holds the Arrow schemas of every table monomer writes and is
// the only code that reads or writes Parquet.
//
// Each table is declared once, as a struct whose fields are its columns in
// order (ItemsCols for items.parquet, ...): the field's tag names the column
// and may mark it dictionary-encoded, its Go slice type gives the Arrow type,
// and the exported *arrow.Schema of the table (Items, ...) is derived from it.
// Write takes such a struct, so a column of the wrong type does not compile,
// and the declared structs start with a blank field, so they can only be
// written as keyed literals: swapping two columns of one type means writing
// the wrong name beside each. ReadAll reads a table back into the same
// struct, so reader and writer name a column by one field, and a file
// without it fails naming the column. A table too large to hold whole is
// streamed with the same structs: NewWriter takes rows in batches and
// writes row groups of a fixed length, Batches reads it back one row group
// at a time.
//
// Files are written one way so two runs on the same rows give the same bytes
// (arrow-go's defaults would not: its version in every footer, statistics
// in map order): a pinned created-by,
// zstd compression at a fixed level, a fixed row-group length, and dictionary
// encoding only for the low-cardinality string columns marked in the schema
// (arrow-go writes encoding statistics in map order once a dictionary falls
// back to plain encoding, which breaks byte identity).
//
// Every read checks the file's bytes before arrow-go decodes them (the
// stored Arrow schema, every page header and each page's CRC-32 where the
// file has one) and returns what arrow-go cannot decode, or panics on, as
// ErrDamaged naming the file: a damaged table is bad input, never a crash.
//
// It owns the table declarations and their bytes, and the cell-by-cell
// comparison of two tables (Compare) that monomer diff uses. It must not
// know what a stage does with a table, or which stage writes it.
package schema
