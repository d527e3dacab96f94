//go:build !openblas

package models

func blasInfo() BLASInfo { return BLASInfo{Impl: "gonum", Kernel: "go"} }
