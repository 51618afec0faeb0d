//go:build !amd64

package usem

func matmul(out, x []float32, rows, k int, w []float32, m int) { matmulGeneric(out, x, rows, k, w, m) }
