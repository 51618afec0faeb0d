// Package layout holds tests that keep Mneme's structure honest: every
// package documented, Cypher only in graph, gin only in handlers, and
// dependencies pointing one way.
package layout
