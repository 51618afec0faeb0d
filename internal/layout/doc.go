// Package layout holds tests that keep Mneme's structure honest: every
// package documented and given a layer, imports running only down the
// layers, at most five Mneme imports outside the composition root, no
// package past about 3,000 lines of code, Cypher only in graph, OPA only in
// policy and Rego files only in rego/, gin only in handlers.
package layout
