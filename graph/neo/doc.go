// Package neo is the plumbing Mneme's Neo4j stores share: a Runner that runs
// managed transactions under a deadline, Translate, which turns driver
// errors into the domain's (memory.ErrUnavailable, memory.ErrConflict), and
// lenient readers of query records. It holds no Cypher: the stores in graph
// and its sub-packages bring their own queries.
package neo
