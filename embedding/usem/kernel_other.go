//go:build !amd64

package usem

func gemv(o, xr, w []float32, m int) { gemvGeneric(o, xr, w, m) }
