//go:build !amd64

package csrkern

func rowMul(out []float32, idx []int32, val []float32, w []float32, stride int) {
	rowMulGo(out, idx, val, w, stride)
}

func rowAcc(acc []float32, idx []int32, val []float32, g []float32, stride int) {
	rowAccGo(acc, idx, val, g, stride)
}
