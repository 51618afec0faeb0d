package usem

// matmulGeneric adds x·w to out (rows × k times k × m), row by row.
func matmulGeneric(out, x []float32, rows, k int, w []float32, m int) {
	for r := range rows {
		gemvGeneric(out[r*m:(r+1)*m], x[r*k:(r+1)*k], w, m)
	}
}

// gemvGeneric adds xr·w to o, w being len(xr) × len(o).
func gemvGeneric(o, xr, w []float32, m int) {
	for p, a := range xr {
		if a == 0 {
			continue
		}
		row := w[p*m : (p+1)*m]
		row = row[:len(o)]
		for j := range o {
			o[j] += a * row[j]
		}
	}
}
