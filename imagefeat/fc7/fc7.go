// Package fc7 is what the job file needs to know of the image features,
// the FC7 activations of a CNN: their dimension and the image_scale
// setting. It is apart from imagefeat, whose Arrow code the job file's
// checks have no use for.
package fc7

// Dim is the dimension of the paper's image features (FC7 of the Caffe
// reference network).
const Dim = 4096

// ScaleSettings are the job settings of the image features (declared as
// package monomer/internal/setting describes).
type ScaleSettings struct {
	// ImageScale divides every image feature. The default is what the
	// original code divides FC7 activations by: their maximum over the data
	// set (imagefeat.DefaultScale). Features are float32, hence the cap.
	ImageScale float64 `yaml:"image_scale" default:"58.388599" min:"0" cap:"3.4028234663852886e+38"`
}
