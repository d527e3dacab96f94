//go:build !amd64

package csrkern

func mulAdd(out []float32, idx []int32, val []float32, src []float32, stride int) {
	mulAddGo(out, idx, val, src, stride)
}

func colsAdd(acc []float32, stride, c int, feat, end []int32, first int, row []int32, val []float32, g []float32, gs int) {
	colsAddGo(acc, stride, c, feat, end, first, row, val, g, gs)
}

func colsMul(p []float32, ps, c int, feat, end []int32, first int, row []int32, val []float32, w []float32, ws int) {
	colsMulGo(p, ps, c, feat, end, first, row, val, w, ws)
}

func rowAcc(acc []float32, idx []int32, val []float32, g []float32, stride int) {
	rowAccGo(acc, idx, val, g, stride)
}

func widest() path { return pathGo }
