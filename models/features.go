package models

// Features is an item-feature matrix: row i is item i's feature vector. The
// features stage produces either kind; models accept both through this
// interface and check which access a value offers.
type Features interface {
	Rows() int
	Dim() int
}

// Dense gives rows as contiguous float32 slices (image features). The slice
// is read-only and may point into a memory-mapped file.
type Dense interface {
	Features
	Row(i int) []float32
}

// DenseBlock is a Dense that can give consecutive rows lo..hi-1 as one
// contiguous slice (a memory-mapped matrix), or nil where they are not
// contiguous. The kernels then multiply on it instead of copying the rows.
// Where Block(lo, hi) is nil, Block(lo, h) is nil for every h > hi too
// (storage in consecutive pieces, such as record batches): the kernels
// search for where a range of rows stops being contiguous.
type DenseBlock interface {
	Dense
	Block(lo, hi int) []float32
}

// Sparse gives rows as sorted column indices with their values (bag of words).
type Sparse interface {
	Features
	SparseRow(i int) (idx []int32, val []float32)
}
