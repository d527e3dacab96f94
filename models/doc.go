// Package models holds the compatibility models of the paper (WNN, CT, LMT,
// Monomer, LDA+WNN), their shared L-BFGS trainer and compute kernels.
//
// It owns the mathematics: objectives, analytic gradients (each checked
// against finite differences in the tests), the feature scaling, exact
// top-k retrieval and the BLAS wrapper (gonum in pure Go, OpenBLAS's sgemm
// with -tags openblas). It must not read the run directory, log, read the
// environment or draw its own randomness; determinism at any GOMAXPROCS is
// its contract, so parallel work is split in fixed blocks and reduced in a
// fixed order.
package models
