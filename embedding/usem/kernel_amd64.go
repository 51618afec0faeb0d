package usem

import "golang.org/x/sys/cpu"

// fma is whether the AVX2/FMA kernel may run on this CPU.
var fma = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// gemvBlock64 adds Σ_p x[p]·w[p·stride : p·stride+64] to out[0:64]; stride
// is in bytes. It is written in kernel_amd64.s.
//
//go:noescape
func gemvBlock64(out, x, w *float32, k, stride int)

// gemv adds xr·w to o, w being len(xr) × m with m = len(o): 64 columns at a
// time in registers when the CPU has FMA.
func gemv(o, xr, w []float32, m int) {
	if !fma || len(xr) == 0 || m%64 != 0 || len(w) < len(xr)*m {
		gemvGeneric(o, xr, w, m)
		return
	}
	for c := 0; c < m; c += 64 {
		gemvBlock64(&o[c], &xr[0], &w[c], len(xr), 4*m)
	}
}
