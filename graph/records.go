package graph

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/facts"
	"mneme/memory"
)

// memoryProps returns the stored properties of m. Optional strings and zero
// times are stored as null (absent), so that absent idem_key values do not
// collide in the uniqueness constraint and indexes skip empty keys.
func memoryProps(m memory.Memory) map[string]any {
	var embedding []float64
	if len(m.Embedding) > 0 {
		embedding = make([]float64, len(m.Embedding))
		for i, f := range m.Embedding {
			embedding[i] = float64(f)
		}
	}
	var validTo any
	if m.ValidTo != nil {
		validTo = timeOrNil(*m.ValidTo)
	}
	factText, factNumbers := facts.Signature(m.Content)
	return map[string]any{
		// The dedup search looks only at memories sharing one of these
		// (see cypherSimilarBatch): reading every embedding of a user's
		// partition for each new memory made queued batches time out.
		"fact_text":        factText,
		"fact_numbers":     factNumbers,
		"tenant":           m.Tenant,
		"id":               m.ID,
		"user_id":          m.UserID,
		"scope":            memory.ScopeOf(m),
		"scope_id":         strOrNil(m.ScopeID),
		"partition":        partitionOf(m.Tenant, m.UserID),
		"agent_id":         strOrNil(m.AgentID),
		"session_id":       strOrNil(m.SessionID),
		"type":             m.Type,
		"kind":             strOrNil(m.Kind),
		"key":              strOrNil(m.Key),
		"content":          m.Content,
		"status":           m.Status,
		"sensitivity":      m.Sensitivity,
		"sens_rank":        sensRank(m.Sensitivity),
		"importance":       m.Importance,
		"confidence":       m.Confidence,
		"source":           strOrNil(m.Source),
		"valid_from":       timeOrNil(m.ValidFrom),
		"valid_to":         validTo,
		"created_at":       timeOrNil(m.CreatedAt),
		"updated_at":       timeOrNil(m.UpdatedAt),
		"last_accessed_at": nil,
		"access_count":     0,
		"version":          m.Version,
		"embedding":        embeddingOrNil(embedding),
		"embedding_model":  strOrNil(m.EmbeddingModel),
		"embedding_dim":    intOrNil(m.EmbeddingDim),
		"idem_key":         strOrNil(m.IdempotencyKey),
		"evidence_count":   intOrNil(m.EvidenceCount),
	}
}

// entityParams returns m's entities as Cypher parameters. What the writer
// left out is null, not empty, so that a mention without a name has none.
func entityParams(es []memory.Entity) []map[string]any {
	out := make([]map[string]any, len(es))
	for i, e := range es {
		var aliases any
		if a := withoutEmpty(e.Aliases); len(a) > 0 {
			aliases = a
		}
		out[i] = map[string]any{"id": e.ID, "kind": strOrNil(e.Kind), "name": strOrNil(e.Name), "aliases": aliases}
	}
	return out
}

func embeddingOrNil(v []float64) any {
	if v == nil {
		return nil
	}
	return v
}

// decodeMemory reads the map built by memoryProjection.
func decodeMemory(v any) (memory.Memory, error) {
	p, ok := v.(map[string]any)
	if !ok {
		return memory.Memory{}, fmt.Errorf("graph: memory record is %T, not a map", v)
	}
	m := memory.Memory{
		ID:             str(p["id"]),
		Tenant:         str(p["tenant"]),
		UserID:         str(p["user_id"]),
		AgentID:        str(p["agent_id"]),
		SessionID:      str(p["session_id"]),
		Type:           str(p["type"]),
		Kind:           str(p["kind"]),
		Key:            str(p["key"]),
		Content:        str(p["content"]),
		Status:         str(p["status"]),
		Sensitivity:    str(p["sensitivity"]),
		Importance:     float(p["importance"]),
		Confidence:     float(p["confidence"]),
		Source:         str(p["source"]),
		ScopeID:        str(p["scope_id"]),
		ValidFrom:      timeOf(p["valid_from"]),
		CreatedAt:      timeOf(p["created_at"]),
		UpdatedAt:      timeOf(p["updated_at"]),
		Version:        int(integer(p["version"])),
		IdempotencyKey: str(p["idem_key"]),
		EvidenceCount:  int(integer(p["evidence_count"])),
		EmbeddingModel: str(p["embedding_model"]),
		EmbeddingDim:   int(integer(p["embedding_dim"])),
	}
	if sc := str(p["scope"]); sc != memory.ScopeUser {
		m.Scope = sc
	}
	if t := timeOf(p["valid_to"]); !t.IsZero() {
		m.ValidTo = &t
	}
	m.AccessCount = int(integer(p["access_count"]))
	if t := timeOf(p["last_accessed_at"]); !t.IsZero() {
		m.LastAccessedAt = &t
	}
	if vec, ok := p["embedding"].([]any); ok {
		m.Embedding = make([]float32, len(vec))
		for i, f := range vec {
			m.Embedding[i] = float32(float(f))
		}
	}
	if es, ok := p["entities"].([]any); ok {
		for _, e := range es {
			em, _ := e.(map[string]any)
			m.Entities = append(m.Entities, memory.Entity{ID: str(em["id"]), Kind: str(em["kind"]), Name: str(em["name"]), Aliases: strs(em["aliases"])})
		}
		// Graph edges have no order; sort for stable output.
		slices.SortFunc(m.Entities, func(a, b memory.Entity) int { return cmp.Compare(a.ID, b.ID) })
	}
	// A memory supersedes at most one version, except when data predates the
	// slot lock; then the highest version is the one it replaced.
	best := int64(-1)
	if ps, ok := p["supersedes"].([]any); ok {
		for _, x := range ps {
			pm, _ := x.(map[string]any)
			if v := integer(pm["version"]); v > best {
				best, m.Supersedes = v, str(pm["id"])
			}
		}
	}
	return m, nil
}

// memoryOf reads the "memory" column of a record.
func memoryOf(r *neo4j.Record) (memory.Memory, error) {
	v, _ := r.Get("memory")
	return decodeMemory(v)
}

// MemoryOf decodes a memory projected as "memory" (MemoryProjectionLean),
// for graph's subpackages.
func MemoryOf(r *neo4j.Record) (memory.Memory, error) { return memoryOf(r) }

// hitOf reads the "memory" and "score" columns of a record.
func hitOf(r *neo4j.Record) (memory.Hit, error) {
	m, err := memoryOf(r)
	if err != nil {
		return memory.Hit{}, err
	}
	score, _ := r.Get("score")
	sim, _ := r.Get("similarity")
	return memory.Hit{Memory: m, Score: float(score), Similarity: floatOrNil(sim)}, nil
}
