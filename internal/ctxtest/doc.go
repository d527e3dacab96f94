// Package ctxtest gives tests a context cancelled at a known check, so a
// test of cancellation needs no goroutine and no timer.
package ctxtest
