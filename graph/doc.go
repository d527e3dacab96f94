// Package graph builds what the models train on from an experiment's edges:
// negatives by degree-preserving rewiring (or uniform sampling) and the
// 80/10/10 split.
//
// It owns the edge and pair semantics: which related-list entries are edges
// (CrossEdges: no self-loops, no edge within a subcategory, no duplicates),
// what a negative is, how rewiring keeps every item's degree, and the names
// of the splits (ParseSplit). Its long loops take a context first and stop
// on cancel. It must not read files, log or draw its own randomness: the
// caller passes the seeded generator.
package graph
