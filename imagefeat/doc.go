// Package imagefeat reads and writes the image-feature files of the Amazon
// product data set and turns them into the memory-mapped float32 matrix the
// models train on.
//
// # The .b format
//
// A .b file is a sequence of records with no header or footer. A record is
//
//	10 bytes   ASIN, printable ASCII, space-padded on the right
//	4*Dim      Dim little-endian IEEE-754 float32 values (Dim = 4096: the
//	           FC7 layer of the Caffe reference network)
//
// so 16,394 bytes a record at the default dimension. The ASIN is the header up
// to its first space, as the original Python readers take it. The file may be
// gzip-compressed; this is detected from the magic bytes, not the name. The
// files are large (10.8 GB for Women's Clothing), so everything here streams:
// a file is read once, front to back, in chunks of about 1 MiB (a gzipped one
// is inflated by a goroutine a few chunks ahead, on another core).
//
// Validation is strict: a header with a byte outside printable ASCII, an empty
// ASIN, a NaN or infinite value, a short final record and a corrupt gzip
// stream are errors that name the file and the byte offset (counted in the
// uncompressed stream), and wrap one of the package's sentinel errors.
// An empty file holds zero records and is not an error.
//
// The calls that read a whole file, Extract and ScanASINs, take a context
// first and return its error within about a chunk once it is done; Open and
// NewReader take none, since their caller drives the loop. The dimension is
// an option, WithDim, for every call alike (default Dim).
//
// # The matrix format
//
// [Extract] writes an Arrow IPC file (the "Feather v2" random-access format,
// uncompressed) that [OpenMatrix] memory-maps, and that any Arrow
// implementation opens as it is, e.g. pyarrow.ipc.open_file(pyarrow.memory_map(path)):
//
//	schema  asin:     utf8, not null             the item's ASIN
//	        features: fixed_size_list<item: float32 not null>[Dim], not null
//	metadata "monomer.imagefeat.dim", "monomer.imagefeat.rows",
//	         "monomer.imagefeat.scale" (decimal strings)
//
// Row i of the file is item i. Rows are cut into record batches of a fixed row
// count (the last may be shorter). Inside a batch the features of its rows are
// one contiguous, 8-byte aligned buffer of float32, so a row is a plain slice
// of the mapping: [Matrix.Row] copies nothing, and the pages of a 10.8 GB
// matrix are read lazily by the kernel and shared with the page cache.
//
// Extract writes that file without staging the matrix anywhere: it first
// writes the complete Arrow file with all-zero feature buffers, leaving them
// as holes (the zeros are never written), then streams the .b file once and
// writes each wanted record, divided by the scale, at its row's place with
// positioned writes. Memory stays at a few MiB plus the ASIN index whatever
// the file size; the disk holds the output once.
package imagefeat
