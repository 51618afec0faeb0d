package graph

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// The names the statements of graph and the stores beside it use: labels,
// relationship types and property keys. Neo4j empties its query caches
// whenever a new one is made, so a fresh database that met its first access
// count or key use after the warm-up planned every recall statement again,
// 100–250 ms each, in front of users. EnsureSchema makes them all at once;
// a test fails on a name a statement uses and these lack.
var (
	tokenLabels = []string{"APIKey", "Agent", "DeletedKey", "Document", "Entity", "Grant", "Memory", "MemoryTally", "PolicyRevision",
		"PolicyState", "Principal", "RepeatKey", "Scope", "Session", "TallyAnchor", "TallyPending", "Tenant", "Tombstone", "User"}
	tokenTypes      = []string{"ABOUT", "IN_SESSION", "MENTIONS", "SECTION_OF", "SHARED_IN", "SUPERSEDES", "WRITTEN_BY"}
	tokenProperties = []string{"_created", "_erased_entities", "_erased_memories", "_erased_sessions", "_erasing", "_lock", "_unseen",
		"access_count", "activated_at", "activated_by", "active", "agent_id", "aliases", "author", "body", "by", "claimed_at", "claimed_until",
		"confidence", "content", "created_at", "deleted_at", "digest", "eid", "embedding", "embedding_dim", "embedding_model",
		"entities", "epoch", "erasing", "evidence_count", "evidence_keys", "evidence_sessions", "expires_at", "fact_numbers",
		"fact_text", "fence", "fence_at", "format", "grace_until", "grant_revision", "grantee", "hash", "headings", "history", "id", "id_fold", "idem_key",
		"importance", "imported_at", "key", "kind", "kinds", "last_accessed_at", "last_revision", "last_used_at", "lineage", "max_sensitivity", "memory", "n", "name",
		"never_active", "number", "part", "partition", "position", "prev", "principal_id", "props", "reason", "removed_at", "revoked_at", "roles",
		"rotated_to", "running_until", "scope", "scope_id", "sections", "sens", "sens_rank", "sensitivity", "session_id", "source", "status",
		"status_changed_at", "status_reason", "team", "tenant", "title", "type", "types", "updated_at", "user_id",
		"user_max_sensitivity", "user_ref", "users_read_shared", "valid_from", "valid_to", "version", "written_at"}
)

// ensureTokens makes every name of tokenLabels, tokenTypes and
// tokenProperties the database lacks.
func (s *Store) ensureTokens(ctx context.Context) error {
	return s.makeTokens(ctx, tokenLabels, tokenTypes, tokenProperties)
}

// makeTokens makes the labels, relationship types and property keys given;
// those the database holds stay as they are.
func (s *Store) makeTokens(ctx context.Context, labels, types, properties []string) error {
	err := s.run(ctx, neo4j.AccessModeWrite, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, ddlMakeTokens, map[string]any{"labels": labels, "types": types, "properties": properties})
	})
	if err != nil {
		return fmt.Errorf("graph: making labels and property keys: %w", err)
	}
	return nil
}
