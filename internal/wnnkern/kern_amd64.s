#include "textflag.h"

// SQDIFF32 sets Y4-Y7 to (a − b)² over the 32 elements at index AX, with a
// at SI and b at DX: the part both kernels share.
#define SQDIFF32 \
	VMOVUPS (SI)(AX*4), Y4 \
	VMOVUPS 32(SI)(AX*4), Y5 \
	VMOVUPS 64(SI)(AX*4), Y6 \
	VMOVUPS 96(SI)(AX*4), Y7 \
	VSUBPS  (DX)(AX*4), Y4, Y4 \
	VSUBPS  32(DX)(AX*4), Y5, Y5 \
	VSUBPS  64(DX)(AX*4), Y6, Y6 \
	VSUBPS  96(DX)(AX*4), Y7, Y7 \
	VMULPS  Y4, Y4, Y4 \
	VMULPS  Y5, Y5, Y5 \
	VMULPS  Y6, Y6, Y6 \
	VMULPS  Y7, Y7, Y7

// The AVX2 WNN kernels; kern.go's Go versions spell out the same
// arithmetic (no FMA: separate multiply and add, each rounded to float32).

// func distAVX2(w2, a, b []float32, next *float32) float32
// Y0-Y3 hold lanes 0-7, 8-15, 16-23, 24-31 of each 32-element block. Each
// block also prefetches the same two cache lines of the row at next into L2
// (PREFETCHT1: into L1 it would evict a and b, which the gradient reads
// next; PREFETCHT0 measured 10 % slower).
TEXT ·distAVX2(SB), NOSPLIT, $0-84
	MOVQ w2_base+0(FP), DI
	MOVQ w2_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	MOVQ next+72(FP), R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $~31, BX
	CMPQ AX, BX
	JGE  dist8

dist32:
	PREFETCHT1 (R8)(AX*4)
	PREFETCHT1 64(R8)(AX*4)
	SQDIFF32
	VMULPS  (DI)(AX*4), Y4, Y4
	VMULPS  32(DI)(AX*4), Y5, Y5
	VMULPS  64(DI)(AX*4), Y6, Y6
	VMULPS  96(DI)(AX*4), Y7, Y7
	VADDPS  Y4, Y0, Y0
	VADDPS  Y5, Y1, Y1
	VADDPS  Y6, Y2, Y2
	VADDPS  Y7, Y3, Y3
	ADDQ    $32, AX
	CMPQ    AX, BX
	JLT     dist32

dist8:
	MOVQ CX, BX
	ANDQ $~7, BX
	CMPQ AX, BX
	JGE  distReduce

dist8loop:
	VMOVUPS (SI)(AX*4), Y4
	VSUBPS  (DX)(AX*4), Y4, Y4
	VMULPS  Y4, Y4, Y4
	VMULPS  (DI)(AX*4), Y4, Y4
	VADDPS  Y4, Y0, Y0
	ADDQ    $8, AX
	CMPQ    AX, BX
	JLT     dist8loop

distReduce:
	VADDPS       Y2, Y0, Y0 // lanes l + l+16
	VADDPS       Y3, Y1, Y1 // lanes l+8 + l+24
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0 // u_i = r_i + r_i+4
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0 // u_0 + u_2, u_1 + u_3
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VXORPS       X2, X2, X2 // s, the last len mod 8 elements

dist1:
	CMPQ   AX, CX
	JGE    distDone
	VMOVSS (SI)(AX*4), X4
	VSUBSS (DX)(AX*4), X4, X4
	VMULSS X4, X4, X4
	VMULSS (DI)(AX*4), X4, X4
	VADDSS X4, X2, X2
	INCQ   AX
	JMP    dist1

distDone:
	VADDSS     X2, X0, X0
	VZEROUPPER
	MOVSS      X0, ret+80(FP)
	RET

// func gradAVX2(acc []float32, alpha float32, a, b []float32)
TEXT ·gradAVX2(SB), NOSPLIT, $0-80
	MOVQ         acc_base+0(FP), DI
	MOVQ         acc_len+8(FP), CX
	VBROADCASTSS alpha+24(FP), Y8
	MOVQ         a_base+32(FP), SI
	MOVQ         b_base+56(FP), DX
	XORQ         AX, AX
	MOVQ         CX, BX
	ANDQ         $~31, BX
	CMPQ         AX, BX
	JGE          grad8

grad32:
	SQDIFF32
	VMULPS  Y8, Y4, Y4
	VMULPS  Y8, Y5, Y5
	VMULPS  Y8, Y6, Y6
	VMULPS  Y8, Y7, Y7
	VADDPS  (DI)(AX*4), Y4, Y4
	VADDPS  32(DI)(AX*4), Y5, Y5
	VADDPS  64(DI)(AX*4), Y6, Y6
	VADDPS  96(DI)(AX*4), Y7, Y7
	VMOVUPS Y4, (DI)(AX*4)
	VMOVUPS Y5, 32(DI)(AX*4)
	VMOVUPS Y6, 64(DI)(AX*4)
	VMOVUPS Y7, 96(DI)(AX*4)
	ADDQ    $32, AX
	CMPQ    AX, BX
	JLT     grad32

grad8:
	MOVQ CX, BX
	ANDQ $~7, BX
	CMPQ AX, BX
	JGE  grad1

grad8loop:
	VMOVUPS (SI)(AX*4), Y4
	VSUBPS  (DX)(AX*4), Y4, Y4
	VMULPS  Y4, Y4, Y4
	VMULPS  Y8, Y4, Y4
	VADDPS  (DI)(AX*4), Y4, Y4
	VMOVUPS Y4, (DI)(AX*4)
	ADDQ    $8, AX
	CMPQ    AX, BX
	JLT     grad8loop

grad1:
	CMPQ   AX, CX
	JGE    gradDone
	VMOVSS (SI)(AX*4), X4
	VSUBSS (DX)(AX*4), X4, X4
	VMULSS X4, X4, X4
	VMULSS X8, X4, X4
	VADDSS (DI)(AX*4), X4, X4
	VMOVSS X4, (DI)(AX*4)
	INCQ   AX
	JMP    grad1

gradDone:
	VZEROUPPER
	RET
