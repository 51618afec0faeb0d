// Command bench is Mneme's recall load tool. It wires the real stores, policy
// engine and embedder the way memoryd does (NEO4J_URI, REDIS_URL, …), loads
// a generated tenant of memories through graph.Store.CreateMemories, and then
// measures recall latency in five modes, interleaved per query so that
// machine noise hits them alike:
//
//	policy          memory.Service.Recall with the OPA engine, its read
//	                policy compiled to a Cypher filter by partial evaluation
//	policy-clauses  the same with scope.rego's clauses as the read scope
//	nopolicy        the same Service with an allow-all Authorizer
//	bare-exact      graph.Store.SearchVector, the exact cosine query recall wraps
//	bare-index      graph.Store.SearchVectorIndex, the Neo4j vector index alone,
//	                searched in the user's partition as recall searches it
//
// It prints a table per run and the median across runs, and with -json
// writes the same numbers to a file. Run it with
//
//	go run ./bench -memories 10000 -users 100 -agents 3 -runs 3
//
// With -shared N it then writes N memories of shared knowledge (the
// tenant's rules, teams' and agents' procedures) through memory.Service.Write,
// the write path of POST /v1/memories, runs the same queries again and
// compares every mode with and without it. Only policy recall reads shared
// knowledge: its joint scope needs the policy's compiled filter, which
// policy-clauses and nopolicy do not have.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
