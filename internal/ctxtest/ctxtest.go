package ctxtest

import "context"

// Countdown is live for its first N Err calls and reports context.Canceled
// from then on. Done is never closed: it serves code that polls Err, as the
// library's long loops do.
type Countdown struct {
	context.Context
	N int
}

// After returns a context live for its first n Err calls.
func After(n int) *Countdown { return &Countdown{Context: context.Background(), N: n} }

// Err counts the call and reports whether the countdown has run out.
func (c *Countdown) Err() error {
	if c.N--; c.N < 0 {
		return context.Canceled
	}
	return nil
}
