// Package neo is the plumbing Mneme's Neo4j stores share: a Runner that runs
// managed transactions under a deadline, Translate, which turns driver
// errors into the domain's (memory.ErrUnavailable, memory.ErrConflict),
// lenient readers of query records, and the Lucene syntax the full-text
// indexes read (fulltext.go). It holds no Cypher: the stores in graph
// and its sub-packages bring their own queries.
package neo
