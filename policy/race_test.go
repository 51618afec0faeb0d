//go:build race

package policy

// raceEnabled shrinks the exhaustive tests under the race detector, which
// slows OPA's evaluator about tenfold.
const raceEnabled = true
