package usem

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
