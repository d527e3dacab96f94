#include "textflag.h"

// Each kernel runs one tile of columns over all n ≥ 1 non-zeros of a row:
// DI the output (mul: its sums start from the values there, which RowMul
// zeroes and Cols.AddTo does not) or accumulator (acc) tile, SI idx, DX val, CX n, R8
// the w (mul) or g (acc) tile, R9 the stride in bytes; AX counts non-zeros,
// BX is idx[j]·stride. Products are rounded before they are added (VMULPS
// then VADDPS), as the Go loops do. The widest tile holds 96 columns in
// Y0-Y11 (LMT's K=100 and Monomer's 104 columns take two passes over the
// row), Y12-Y14 hold products, and the broadcast value is in Y15.

// ARGS loads the arguments and clears the count.
#define ARGS(dst, src) \
	MOVQ dst+0(FP), DI \
	MOVQ idx+8(FP), SI \
	MOVQ val+16(FP), DX \
	MOVQ n+24(FP), CX \
	MOVQ src+32(FP), R8 \
	MOVQ sb+40(FP), R9 \
	XORQ AX, AX

// ROW sets BX to the offset of non-zero AX's row and broadcasts its value.
#define ROW(bcast) \
	MOVLQSX      (SI)(AX*4), BX \
	IMULQ        R9, BX \
	VBROADCASTSS (DX)(AX*4), bcast

// MULADD adds value · w[row][off bytes on] to the sums in r.
#define MULADD(op, add, off, r, tmp, bcast) \
	op  off(R8)(BX*1), bcast, tmp \
	add tmp, r, r

// ACCADD adds value · g (in r) to the accumulator's row at BX + off.
#define ACCADD(op, add, mov, off, r, tmp, bcast) \
	op  r, bcast, tmp \
	add off(BX), tmp, tmp \
	mov tmp, off(BX)

// NEXT loops back while non-zeros are left.
#define NEXT(label) \
	INCQ AX \
	CMPQ AX, CX \
	JLT  label

// func mul96(out *float32, idx *int32, val *float32, n int, w *float32, sb int)
TEXT ·mul96(SB), NOSPLIT, $0-48
	ARGS(out, w)
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	VMOVUPS 256(DI), Y8
	VMOVUPS 288(DI), Y9
	VMOVUPS 320(DI), Y10
	VMOVUPS 352(DI), Y11

mul96loop:
	ROW(Y15)
	MULADD(VMULPS, VADDPS, 0, Y0, Y12, Y15)
	MULADD(VMULPS, VADDPS, 32, Y1, Y13, Y15)
	MULADD(VMULPS, VADDPS, 64, Y2, Y14, Y15)
	MULADD(VMULPS, VADDPS, 96, Y3, Y12, Y15)
	MULADD(VMULPS, VADDPS, 128, Y4, Y13, Y15)
	MULADD(VMULPS, VADDPS, 160, Y5, Y14, Y15)
	MULADD(VMULPS, VADDPS, 192, Y6, Y12, Y15)
	MULADD(VMULPS, VADDPS, 224, Y7, Y13, Y15)
	MULADD(VMULPS, VADDPS, 256, Y8, Y14, Y15)
	MULADD(VMULPS, VADDPS, 288, Y9, Y12, Y15)
	MULADD(VMULPS, VADDPS, 320, Y10, Y13, Y15)
	MULADD(VMULPS, VADDPS, 352, Y11, Y14, Y15)
	NEXT(mul96loop)
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VMOVUPS Y8, 256(DI)
	VMOVUPS Y9, 288(DI)
	VMOVUPS Y10, 320(DI)
	VMOVUPS Y11, 352(DI)
	VZEROUPPER
	RET

// func acc96(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int)
TEXT ·acc96(SB), NOSPLIT, $0-48
	ARGS(acc, gr)
	VMOVUPS 0(R8), Y0
	VMOVUPS 32(R8), Y1
	VMOVUPS 64(R8), Y2
	VMOVUPS 96(R8), Y3
	VMOVUPS 128(R8), Y4
	VMOVUPS 160(R8), Y5
	VMOVUPS 192(R8), Y6
	VMOVUPS 224(R8), Y7
	VMOVUPS 256(R8), Y8
	VMOVUPS 288(R8), Y9
	VMOVUPS 320(R8), Y10
	VMOVUPS 352(R8), Y11

acc96loop:
	ROW(Y15)
	ADDQ DI, BX
	ACCADD(VMULPS, VADDPS, VMOVUPS, 0, Y0, Y12, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 32, Y1, Y13, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 64, Y2, Y14, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 96, Y3, Y12, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 128, Y4, Y13, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 160, Y5, Y14, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 192, Y6, Y12, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 224, Y7, Y13, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 256, Y8, Y14, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 288, Y9, Y12, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 320, Y10, Y13, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 352, Y11, Y14, Y15)
	NEXT(acc96loop)
	VZEROUPPER
	RET

// func mul32(out *float32, idx *int32, val *float32, n int, w *float32, sb int)
TEXT ·mul32(SB), NOSPLIT, $0-48
	ARGS(out, w)
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3

mul32loop:
	ROW(Y15)
	MULADD(VMULPS, VADDPS, 0, Y0, Y12, Y15)
	MULADD(VMULPS, VADDPS, 32, Y1, Y13, Y15)
	MULADD(VMULPS, VADDPS, 64, Y2, Y14, Y15)
	MULADD(VMULPS, VADDPS, 96, Y3, Y12, Y15)
	NEXT(mul32loop)
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func acc32(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int)
TEXT ·acc32(SB), NOSPLIT, $0-48
	ARGS(acc, gr)
	VMOVUPS 0(R8), Y0
	VMOVUPS 32(R8), Y1
	VMOVUPS 64(R8), Y2
	VMOVUPS 96(R8), Y3

acc32loop:
	ROW(Y15)
	ADDQ DI, BX
	ACCADD(VMULPS, VADDPS, VMOVUPS, 0, Y0, Y12, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 32, Y1, Y13, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 64, Y2, Y14, Y15)
	ACCADD(VMULPS, VADDPS, VMOVUPS, 96, Y3, Y12, Y15)
	NEXT(acc32loop)
	VZEROUPPER
	RET

// func mul8(out *float32, idx *int32, val *float32, n int, w *float32, sb int)
TEXT ·mul8(SB), NOSPLIT, $0-48
	ARGS(out, w)
	VMOVUPS 0(DI), Y0

mul8loop:
	ROW(Y15)
	MULADD(VMULPS, VADDPS, 0, Y0, Y12, Y15)
	NEXT(mul8loop)
	VMOVUPS Y0, 0(DI)
	VZEROUPPER
	RET

// func acc8(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int)
TEXT ·acc8(SB), NOSPLIT, $0-48
	ARGS(acc, gr)
	VMOVUPS 0(R8), Y0

acc8loop:
	ROW(Y15)
	ADDQ DI, BX
	ACCADD(VMULPS, VADDPS, VMOVUPS, 0, Y0, Y12, Y15)
	NEXT(acc8loop)
	VZEROUPPER
	RET

// func mul4(out *float32, idx *int32, val *float32, n int, w *float32, sb int)
TEXT ·mul4(SB), NOSPLIT, $0-48
	ARGS(out, w)
	VMOVUPS 0(DI), X0

mul4loop:
	ROW(X15)
	MULADD(VMULPS, VADDPS, 0, X0, X12, X15)
	NEXT(mul4loop)
	VMOVUPS X0, 0(DI)
	VZEROUPPER
	RET

// func acc4(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int)
TEXT ·acc4(SB), NOSPLIT, $0-48
	ARGS(acc, gr)
	VMOVUPS 0(R8), X0

acc4loop:
	ROW(X15)
	ADDQ DI, BX
	ACCADD(VMULPS, VADDPS, VMOVUPS, 0, X0, X12, X15)
	NEXT(acc4loop)
	VZEROUPPER
	RET

// func mul1(out *float32, idx *int32, val *float32, n int, w *float32, sb int)
TEXT ·mul1(SB), NOSPLIT, $0-48
	ARGS(out, w)
	VMOVSS 0(DI), X0

mul1loop:
	MOVLQSX (SI)(AX*4), BX
	IMULQ   R9, BX
	VMOVSS  (DX)(AX*4), X15
	MULADD(VMULSS, VADDSS, 0, X0, X12, X15)
	NEXT(mul1loop)
	VMOVSS X0, 0(DI)
	VZEROUPPER
	RET

// func acc1(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int)
TEXT ·acc1(SB), NOSPLIT, $0-48
	ARGS(acc, gr)
	VMOVSS 0(R8), X0

acc1loop:
	MOVLQSX (SI)(AX*4), BX
	IMULQ   R9, BX
	VMOVSS  (DX)(AX*4), X15
	ADDQ DI, BX
	ACCADD(VMULSS, VADDSS, VMOVSS, 0, X0, X12, X15)
	NEXT(acc1loop)
	VZEROUPPER
	RET
