// Package amazon reads the raw files of the Amazon product data set: the 2014
// metadata (one Python dict literal per line), the 2018 metadata (strict JSON
// per line), the review files of both releases, and the 2023 release's
// metadata and reviews (release2023.go: other field names, items keyed by
// parent_asin). Every reader streams, holds
// bounded memory whatever the file size, and detects gzip from the content.
// Reviews is an iterator (range over it; breaking out closes the file), so
// consumers that want the reviews one by one, like bow, take it as it is.
// Lines are parsed on up to GOMAXPROCS goroutines (31 at most, lines.go),
// but callbacks, rejects and the iterator's body run on the caller's
// goroutine in file order, so what a caller sees does not depend on
// GOMAXPROCS.
//
// Readers never log. A malformed line is handed to the caller as a Reject and
// counted; deciding when there are too many is the caller's business.
//
// It owns the raw formats and the item rules of the catalogue (scope.go):
// which items a category prefix scopes in, the subcategory at a depth, the
// related list a graph reads, and which items have a feature source
// (Keep), in ASIN order. It must not know about experiments, run directories
// or the models, and must not decide what is bad input for a run.
package amazon
