package stages

import "monomer/models"

// blasKey wraps the parameters of a stage whose numbers come from BLAS
// products (train, evaluate) with the BLAS implementation, version and
// kernel: two kernels round differently, so they must not share cached
// outputs.
type blasKey struct {
	Params any    `json:"params"`
	BLAS   string `json:"blas"`
}

func withBLAS(params any) blasKey { return blasKey{params, models.BLAS().String()} }
