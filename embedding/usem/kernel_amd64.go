package usem

import "golang.org/x/sys/cpu"

// fma is whether the AVX2/FMA kernels may run on this CPU.
var fma = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// The kernels of kernel_amd64.s. Strides and leading dimensions are in
// bytes.
//
// gemvBlock64 adds Σ_p x[p]·w[p·stride : p·stride+64] to out[0:64].
//
//go:noescape
func gemvBlock64(out, x, w *float32, k, stride int)

// gemm3Block32 does the same for three rows of x and out at once (rows
// ldx and ldo bytes apart) on 32 columns, so that each row of w is read
// once for the three.
//
//go:noescape
func gemm3Block32(out *float32, ldo int, x *float32, ldx int, w *float32, k, stride int)

// matmul adds x·w to out (rows × k times k × m): three rows at a time in
// registers when the CPU has FMA and m is a multiple of 64.
func matmul(out, x []float32, rows, k int, w []float32, m int) {
	if !fma || k == 0 || m%64 != 0 || len(w) < k*m || len(x) < rows*k || len(out) < rows*m {
		matmulGeneric(out, x, rows, k, w, m)
		return
	}
	r := 0
	for ; r+3 <= rows; r += 3 {
		for c := 0; c < m; c += 32 {
			gemm3Block32(&out[r*m+c], 4*m, &x[r*k], 4*k, &w[c], k, 4*m)
		}
	}
	for ; r < rows; r++ {
		for c := 0; c < m; c += 64 {
			gemvBlock64(&out[r*m+c], &x[r*k], &w[c], k, 4*m)
		}
	}
}
