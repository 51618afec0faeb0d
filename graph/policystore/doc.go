// Package policystore keeps in Neo4j what admins change of a tenant's
// policy: its revisions of Rego modules, which one is active (the policy
// state, with its epoch and history) and the tenant's policy settings.
// Store implements policyadmin.PolicyStore over the transaction runner it
// shares with package graph, which declares the schema these records rely
// on (EnsureSchema) and keeps the sharing grants, changed under the same
// lock (graph.MergePolicyState). Every query filters on the tenant.
package policystore
