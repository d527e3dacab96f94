package stages

import (
	"fmt"

	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
)

// machineMemory is the memory training may use; tests replace it.
var machineMemory = pipeline.MachineMemory

// Bytes per learned parameter while a model trains, from how the trainer
// holds its parameter vector θ:
//   - float64 in L-BFGS: 2·Store history vectors (Store 20) plus about 8
//     working vectors (iterate, gradient, direction, start, kept best, the
//     objective's cached point and gradient, the output copy);
//   - float32 in each of the two evaluators (train and validation pairs):
//     the weights; the train evaluator also one gradient accumulator per
//     item group (at most 64, see models' maxItemGroups), the validation
//     one, which computes no gradient, none.
const (
	lbfgsBytesPerParam = 8 * (2*20 + 8)
	evalBytesPerParam  = 4*(1+64) + 4
	bytesPerParam      = lbfgsBytesPerParam + evalBytesPerParam
	// LDA holds five topics × vocabulary float64 matrices (λ, E[log β],
	// its exponent, the sufficient statistics and the output).
	ldaBytesPerWeight = 5 * 8
)

// trainMemory estimates the peak bytes of training model on e. It counts
// what grows with the settings; per-item and per-pair buffers and the
// feature rows, which grow with the data instead, are left out, so it is a
// lower bound (the pre-flight runs before the data exists). The train node
// checks the whole once models.Train has counted them (models.Spec.Memory
// in trainModel): at Women's size the data is most of it.
func trainMemory(e *job.Resolved, model string) int64 {
	return modelMemory(model, e.FeatureDim(), e.Settings.TrainSettings)
}

// modelMemory is trainMemory for features of dimension dim.
func modelMemory(model string, dim int, s models.TrainSettings) int64 {
	m := registered(model)
	if m.Size == nil {
		return 0
	}
	sz := m.Size(int64(dim), s)
	return sz.Params*bytesPerParam + sz.TopicWords*ldaBytesPerWeight
}

// PreflightPart refuses, before anything runs, a model whose settings need
// more memory for training than the machine has (exit 2); the experiment's
// other models are judged on their own.
func (Train) PreflightPart(e *job.Resolved, model string) error {
	need := trainMemory(e, model)
	have, err := machineMemory()
	if err != nil || need <= have {
		return nil // no way to tell (not Linux): let training try
	}
	return fmt.Errorf("%w: experiment %s: training %s needs about %s (%d-dimensional features, k=%d, monomer_k=%d, n=%d, topics=%d), more than the %s this machine has available; lower the sizes",
		job.ErrConfig, e.Name, model, pipeline.GiB(need), e.FeatureDim(),
		e.Settings.K, e.Settings.MonomerK, e.Settings.N, e.Settings.Topics, pipeline.GiB(have))
}
