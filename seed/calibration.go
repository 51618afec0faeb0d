package seed

import _ "embed"

// CalibrationJSON is the labelled data embedding models are calibrated on
// (memoryd calibrate): pairs of texts that restate one fact or state two,
// Chinese and English, near-misses among them (other amounts, dates, names),
// and questions with the memory that answers them, or none.
//
//go:embed calibration.json
var CalibrationJSON []byte
