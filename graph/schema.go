package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/facts"
	"mneme/memory"
)

// schemaTimeout bounds EnsureSchema, index population included, when ctx
// has no earlier deadline.
const schemaTimeout = 5 * time.Minute

// schema lists the DDL EnsureSchema runs, in order, one per transaction
// (Neo4j does not mix schema and data changes in one transaction). The
// vector index follows them in the form the server supports
// (ensureVectorIndex).
var schema = []string{
	ddlMemoryID, ddlUserID, ddlAgentID, ddlEntityID, ddlSessionID, ddlTombstoneID, ddlDeletedKey, ddlRepeatKey, ddlGrantID, ddlAPIKeyID,
	ddlMemoryIdem, ddlMemoryUserIdx, ddlMemoryKeyIdx, ddlMemorySlotIdx,
	ddlMemoryUserCreatedIdx, ddlMemoryUserTypeCreatedIdx, ddlMemoryUserStatusCreatedIdx, ddlMemoryCensusIdx,
	ddlMemoryUserAgentCreatedIdx, ddlMemoryUserKindCreatedIdx,
	ddlMemoryFactTextIdx, ddlMemoryFactNumbersIdx,
	ddlTallyKey, ddlTallyAnchor, ddlTallyPending,
	ddlPolicyStateTenant, ddlPolicyRevisionID,
	ddlMemoryFullTextPartition,
	ddlUserFold,
	// identity (schema_cypher.go; the queries live in package keystore)
	ddlTenantID, ddlPrincipalID, ddlAPIKeyHash, ddlAPIKeyOwner, ddlPrincipalList,
}

// ErrSchemaMismatch means an existing index contradicts what EnsureSchema
// was asked for, such as a vector index of another dimension. Dropping the
// index (and re-embedding) is an operator's decision, never automatic.
var ErrSchemaMismatch = errors.New("graph: schema mismatch")

// EnsureSchema creates the constraints and indexes Mneme needs if they do not
// exist and waits until they are online. It is idempotent and safe to run
// from several processes at once. dim is the embedding dimension of the
// vector index; an existing index of another dimension is ErrSchemaMismatch.
func (s *Store) EnsureSchema(ctx context.Context, dim int) error {
	if dim <= 0 {
		return memory.Invalid("dim", "the embedding dimension must be positive")
	}
	existing, err := s.schemaNames(ctx)
	if err != nil {
		return fmt.Errorf("graph: reading the schema: %w", err)
	}
	if !existing[ddlName(ddlTallyKey)] {
		// Memories stored before tallies existed have none: their tenants'
		// counts come from the memories until a reconciliation. The marks'
		// constraint comes first, so that processes marking at once make
		// one mark per tenant.
		if err := s.create(ctx, ddlTallyPending, dim); err != nil {
			return err
		}
		err := s.run(ctx, neo4j.AccessModeWrite, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
			return exec(ctx, tx, cypherTallyPending, nil)
		})
		if err != nil {
			return fmt.Errorf("graph: marking untallied tenants: %w", err)
		}
	}
	for _, ddl := range schema {
		if existing[ddlName(ddl)] {
			continue
		}
		if err := s.create(ctx, ddl, dim); err != nil {
			return err
		}
	}
	vec, err := s.ensureVectorIndex(ctx, dim, existing)
	if err != nil {
		return err
	}
	if err := s.checkVectorDimension(ctx, vec, dim); err != nil {
		return err
	}
	if err := s.ensureTokens(ctx); err != nil {
		return err
	}
	if err := s.backfill(ctx, "partitions", cypherOldPartitions, cypherSetPartitions, partitionRow); err != nil {
		return err
	}
	if err := s.backfill(ctx, "fact signatures", cypherMissingFactSignatures, cypherSetFactSignatures, factSignatureRow); err != nil {
		return err
	}
	if err := s.backfill(ctx, "entity names", cypherNamedEntities, cypherMoveEntityNames, maps.Clone); err != nil {
		return err
	}
	err = s.run(ctx, neo4j.AccessModeRead, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, ddlAwaitIndexes, map[string]any{"seconds": int(schemaTimeout / time.Second)})
	})
	if err != nil {
		return fmt.Errorf("graph: waiting for indexes: %w", err)
	}
	return nil
}

// create runs one DDL statement, dim its $dim.
func (s *Store) create(ctx context.Context, ddl string, dim int) error {
	err := s.run(ctx, neo4j.AccessModeWrite, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, ddl, map[string]any{"dim": dim})
	})
	// Another process may create the same rule between our IF NOT EXISTS
	// check and our commit; that is success.
	if err != nil && !alreadyExists(err) {
		return fmt.Errorf("graph: schema %q: %w", firstWords(ddl), err)
	}
	return nil
}

// vectorIndex is one form of the memory vector index, with the statements
// that create and drop it.
type vectorIndex struct {
	name, create, drop string
	// partitioned: the index holds each memory's partition, and searches
	// filter on it inside the index (cypherRecallVectorPartition).
	partitioned bool
}

var (
	vectorPartitioned = &vectorIndex{name: indexVector, create: ddlMemoryVector, drop: ddlDropVectorIndex, partitioned: true}
	vectorWhole       = &vectorIndex{name: indexVectorWhole, create: ddlMemoryVectorWhole, drop: ddlDropVectorIndexWhole}
)

// ensureVectorIndex creates the partitioned vector index unless it exists,
// or the whole one where the server cannot (Neo4j 5.26 knows no Cypher 25),
// and drops the whole one beside a partitioned one: every write would pay
// for both. A whole index of another dimension is ErrSchemaMismatch and
// stays, as checkVectorDimension has it. existing names the indexes there
// were.
func (s *Store) ensureVectorIndex(ctx context.Context, dim int, existing map[string]bool) (*vectorIndex, error) {
	vec := vectorPartitioned
	if !existing[vectorPartitioned.name] {
		if existing[vectorWhole.name] {
			if err := s.checkVectorDimension(ctx, vectorWhole, dim); err != nil {
				return nil, err
			}
		}
		err := s.create(ctx, vectorPartitioned.create, dim)
		switch {
		case unsupported(err):
			vec = vectorWhole
			if !existing[vectorWhole.name] {
				s.log.InfoContext(ctx, "the server has no partitioned vector index; creating the whole-database one",
					"index", vectorWhole.name, "err", err)
				if err := s.create(ctx, vectorWhole.create, dim); err != nil {
					return nil, err
				}
			}
		case err != nil:
			return nil, err
		}
	}
	if vec.partitioned && existing[vectorWhole.name] {
		s.log.InfoContext(ctx, "dropping the vector index the partitioned one replaces",
			"index", vectorWhole.name, "replacement", vectorPartitioned.name)
		err := s.run(ctx, neo4j.AccessModeWrite, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
			return exec(ctx, tx, vectorWhole.drop, nil)
		})
		if err != nil {
			return nil, fmt.Errorf("graph: dropping index %s: %w", vectorWhole.name, err)
		}
	}
	s.vector.Store(vec)
	return vec, nil
}

// VectorIndexPartitioned reports whether the vector index holds each
// memory's partition, so that a search walks one user's neighbours (not on
// Neo4j 5.26, whose index ranks the whole database).
func (s *Store) VectorIndexPartitioned(ctx context.Context) (bool, error) {
	vec, err := s.vectorIndex(ctx)
	if err != nil {
		return false, err
	}
	return vec.partitioned, nil
}

// vectorIndex returns the form of the vector index the database has, the
// partitioned one when it has both or neither. It asks the server once.
func (s *Store) vectorIndex(ctx context.Context) (*vectorIndex, error) {
	if vec := s.vector.Load(); vec != nil {
		return vec, nil
	}
	names, err := s.schemaNames(ctx)
	if err != nil {
		return nil, fmt.Errorf("graph: reading the schema: %w", err)
	}
	switch {
	case names[vectorPartitioned.name]:
		s.vector.Store(vectorPartitioned)
	case names[vectorWhole.name]:
		s.vector.Store(vectorWhole)
	default:
		// No index yet: queries fail until EnsureSchema makes one.
		return vectorPartitioned, nil
	}
	return s.vector.Load(), nil
}

// schemaNames returns the names of the database's indexes and constraints.
// A replica starting against a database that has its schema runs none of
// the DDL: each statement is a write transaction that takes the schema lock,
// tens to hundreds of milliseconds of every start.
func (s *Store) schemaNames(ctx context.Context) (map[string]bool, error) {
	names := map[string]bool{}
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		for _, show := range []string{ddlShowIndexNames, ddlShowConstraintNames} {
			got, err := readAll(ctx, tx, show, nil, column("name", str))
			if err != nil {
				return err
			}
			for _, n := range got {
				names[n] = true
			}
		}
		return nil
	})
	return names, err
}

// ddlName is the name a CREATE … IF NOT EXISTS statement gives its index or
// constraint: the word before IF.
func ddlName(ddl string) string {
	f := strings.Fields(ddl)
	for i := 1; i < len(f); i++ {
		if f[i] == "IF" {
			return f[i-1]
		}
	}
	return ""
}

func (s *Store) checkVectorDimension(ctx context.Context, vec *vectorIndex, dim int) error {
	var index indexInfo
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		index, _, err = readOne(ctx, tx, ddlShowIndex, map[string]any{"name": vec.name}, indexInfoOf)
		return err
	})
	kind, got := index.kind, index.dim
	switch {
	case err != nil:
		return fmt.Errorf("graph: inspecting index %s: %w", vec.name, err)
	case kind != "VECTOR":
		return fmt.Errorf("%w: index %s is %q, not a vector index", ErrSchemaMismatch, vec.name, kind)
	case got != int64(dim):
		return fmt.Errorf("%w: vector index %s has dimension %d, but embeddings have %d; "+
			"drop the index and re-embed, or configure an embedder of dimension %d",
			ErrSchemaMismatch, vec.name, got, dim, got)
	}
	return nil
}

// indexInfo is what ddlShowIndex tells of an index: its type and, for a
// vector index, its dimension. No such index reads as the zero value.
type indexInfo struct {
	kind string
	dim  int64
}

func indexInfoOf(rec *neo4j.Record) (indexInfo, error) {
	r := rec.AsMap()
	options, _ := r["options"].(map[string]any)
	config, _ := options["indexConfig"].(map[string]any)
	return indexInfo{kind: str(r["type"]), dim: integer(config["vector.dimensions"])}, nil
}

// alreadyExists reports a schema rule created concurrently by someone else.
func alreadyExists(err error) bool {
	var dbErr *neo4j.Neo4jError
	return errors.As(err, &dbErr) && strings.Contains(dbErr.Code, "AlreadyExists")
}

// unsupported reports a statement the server cannot parse or run, such as
// Cypher 25 on Neo4j 5.26.
func unsupported(err error) bool {
	var dbErr *neo4j.Neo4jError
	return errors.As(err, &dbErr) && strings.HasPrefix(dbErr.Code, "Neo.ClientError.Statement.")
}

// firstWords shortens a DDL statement for error messages.
func firstWords(ddl string) string {
	if f := strings.Fields(ddl); len(f) > 4 {
		return strings.Join(f[:4], " ")
	}
	return ddl
}

// backfillBatch is how many memories one backfill transaction updates.
const backfillBatch = 10_000

// backfill gives memories stored before a property existed (or with a
// former value) their value, batch by batch: find returns up to $batch of
// them, fill computes each one's row for set in Go. It finds nothing to do
// after the first run.
func (s *Store) backfill(ctx context.Context, what, find, set string, fill func(map[string]any) map[string]any) error {
	for {
		var n int
		err := s.run(ctx, neo4j.AccessModeWrite, schemaTimeout, func(tx neo4j.ManagedTransaction) error {
			rows, err := readAll(ctx, tx, find, map[string]any{"batch": backfillBatch}, func(r *neo4j.Record) (map[string]any, error) {
				return fill(r.AsMap()), nil
			})
			if n = len(rows); err != nil || n == 0 {
				return err
			}
			return exec(ctx, tx, set, map[string]any{"rows": rows})
		})
		if err != nil {
			return fmt.Errorf("graph: backfill %s: %w", what, err)
		}
		if n < backfillBatch {
			return nil
		}
	}
}

// partitionRow is the backfill row of a memory's partition token: the
// partitioned full-text and vector indexes find it by that.
func partitionRow(m map[string]any) map[string]any {
	return map[string]any{"eid": m["eid"], "partition": partitionOf(str(m["tenant"]), str(m["user_id"]))}
}

// factSignatureRow is the backfill row of a memory's facts.Signature
// digests: the dedup search finds its candidates through them alone.
func factSignatureRow(m map[string]any) map[string]any {
	text, numbers := facts.Signature(str(m["content"]))
	return map[string]any{"eid": m["eid"], "fact_text": text, "fact_numbers": numbers}
}
