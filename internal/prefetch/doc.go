// Package prefetch is a software prefetch for Go code whose loads are
// scattered but whose addresses are known ahead (the models' pair passes),
// in a package of its own because Go assembly cannot sit in a cgo package
// (models, under the openblas tag).
package prefetch
