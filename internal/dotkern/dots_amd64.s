#include "textflag.h"

// RED stores the lane sum (l0 + l2) + (l1 + l3) of Y (whose low half is X)
// at dst, as dot in dots.go reduces its lanes.
#define RED(Y, X, dst) \
	VEXTRACTF128 $1, Y, X14 \
	VADDPD       X, X14, X14 \
	VPERMILPD    $1, X14, X15 \
	VADDSD       X15, X14, X14 \
	VMOVSD       X14, dst

// MULADD adds q_0·v and q_1·v (v in V) into A0 and A1: products rounded,
// then sums rounded, as dot does.
#define MULADD(V, A0, A1) \
	VMULPD Y8, V, Y12 \
	VMULPD Y9, V, Y13 \
	VADDPD Y12, A0, A0 \
	VADDPD Y13, A1, A1

// func dots2x4(s *float64, ls int, q *float64, d int, v *float64)
// Y0-Y3: q_0 with v_0..v_3; Y4-Y7: q_1 with v_0..v_3; 4 lanes each.
TEXT ·dots2x4(SB), NOSPLIT, $0-40
	MOVQ s+0(FP), DI
	MOVQ ls+8(FP), BX
	SHLQ $3, BX
	MOVQ q+16(FP), SI
	MOVQ d+24(FP), CX
	MOVQ v+32(FP), R8
	MOVQ CX, R12
	SHLQ $3, R12
	LEAQ (SI)(R12*1), DX
	LEAQ (R8)(R12*1), R9
	LEAQ (R9)(R12*1), R10
	LEAQ (R10)(R12*1), R11
	ANDQ $~3, CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ AX, AX
	CMPQ AX, CX
	JGE  reduce

loop:
	VMOVUPD (SI)(AX*8), Y8
	VMOVUPD (DX)(AX*8), Y9
	VMOVUPD (R8)(AX*8), Y10
	MULADD(Y10, Y0, Y4)
	VMOVUPD (R9)(AX*8), Y11
	MULADD(Y11, Y1, Y5)
	VMOVUPD (R10)(AX*8), Y10
	MULADD(Y10, Y2, Y6)
	VMOVUPD (R11)(AX*8), Y11
	MULADD(Y11, Y3, Y7)
	ADDQ $4, AX
	CMPQ AX, CX
	JLT  loop

reduce:
	RED(Y0, X0, (DI))
	RED(Y1, X1, 8(DI))
	RED(Y2, X2, 16(DI))
	RED(Y3, X3, 24(DI))
	RED(Y4, X4, (DI)(BX*1))
	RED(Y5, X5, 8(DI)(BX*1))
	RED(Y6, X6, 16(DI)(BX*1))
	RED(Y7, X7, 24(DI)(BX*1))
	VZEROUPPER
	RET
