// Package pushdown holds the property test that ties policy and graph
// together: on randomized tenants, agents, grants and memories in the real
// Neo4j, the queries the graph store builds from the read filter that package
// policy compiles by partial evaluation return exactly the memories that
// per-memory policy decisions allow. It has no code of its own: policy and
// graph may not import each other, so the test lives here.
package pushdown
