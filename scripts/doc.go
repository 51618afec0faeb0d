// Package scripts holds the local Neo4j and Redis harness (shell scripts and
// the Java launcher) and, in Go, the tests that hold those scripts to their
// word: clear failures, pass-through of existing servers.
package scripts
