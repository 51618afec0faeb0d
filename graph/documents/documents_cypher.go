package documents

import "mneme/graph"

// Queries of documents.go. Every query names the tenant on every node.
const (
	cypherDocument = `MATCH (d:Document {tenant: $tenant, id: $id})
RETURN d.id AS id, d.title AS title, d.format AS format, d.sections AS sections,
       d.imported_at AS imported_at, d.scope AS scope, d.scope_id AS scope_id`

	// cypherSections reads the memories in force of a document's sections.
	cypherSections = `MATCH (m:Memory {tenant: $tenant})-[r:SECTION_OF]->(d:Document {tenant: $tenant, id: $id})
WHERE m.status = 'active'
RETURN r.key AS key, r.digest AS digest, m.id AS id
ORDER BY r.position, r.part, m.created_at`

	cypherRecordDocument = `MERGE (d:Document {tenant: $tenant, id: $id})
SET d.title = $title, d.format = $format, d.sections = $sections, d.imported_at = $imported_at,
    d.scope = $scope, d.scope_id = $scope_id, d.removed_at = null,
    d.claimed_until = CASE WHEN $last THEN null ELSE d.claimed_until END,
    d.running_until = CASE WHEN $last THEN null ELSE d.running_until END`

	// cypherClaim takes the node's write lock first (claimed_at), so that
	// what it reads next is what the claim before it committed. A new
	// document stays out of listings (removed_at) until Record. An import
	// about to write ($run) also needs no other to be running
	// (running_until), and marks itself so.
	cypherClaim = `MERGE (d:Document {tenant: $tenant, id: $id})
ON CREATE SET d.removed_at = $now, d.sections = 0
SET d.claimed_at = $now
WITH d
OPTIONAL MATCH (m:Memory {tenant: $tenant, status: 'active'})-[:SECTION_OF]->(d)
WITH d, count(m) AS active
WITH d, (coalesce(d.scope, '') = $scope AND coalesce(d.scope_id, '') = $scope_id)
        OR (active = 0 AND coalesce(d.claimed_until, $now) <= $now) AS free,
     $run AND coalesce(d.running_until, $now) > $now AS running
WITH d, free, running, free AND NOT running AS took
SET d.scope = CASE WHEN took THEN $scope ELSE d.scope END,
    d.scope_id = CASE WHEN took AND $scope_id <> '' THEN $scope_id WHEN took THEN null ELSE d.scope_id END,
    d.claimed_until = CASE WHEN took THEN $until ELSE d.claimed_until END,
    d.running_until = CASE WHEN took AND $run THEN $until ELSE d.running_until END
RETURN free, running`

	cypherLinkSections = `MATCH (d:Document {tenant: $tenant, id: $id})
UNWIND $rows AS row
MATCH (m:Memory {tenant: $tenant, id: row.memory})
MERGE (m)-[r:SECTION_OF]->(d)
SET r.key = row.key, r.digest = row.digest, r.headings = row.headings,
    r.position = row.position, r.part = row.part`

	// cypherRetire archives active section memories; valid_to closes them
	// so as_of still finds what held before.
	cypherRetire = `MATCH (m:Memory {tenant: $tenant})-[:SECTION_OF]->(d:Document {tenant: $tenant, id: $id})
WHERE m.status = 'active' AND ($all OR m.id IN $ids)
WITH m ORDER BY m.user_id
CALL (m) { ` + graph.TallyDown + ` }
SET m.status = 'archived', m.valid_to = $at, m.updated_at = $at
WITH m
CALL (m) { ` + graph.TallyUp + ` }
RETURN count(m) AS n`

	// cypherList counts a document's sections in force, as cypherSections
	// reads them: a section whose memory was deleted, archived or
	// superseded outside an import is no longer in force.
	cypherList = `MATCH (d:Document {tenant: $tenant})
WHERE d.removed_at IS NULL
OPTIONAL MATCH (m:Memory {tenant: $tenant, status: 'active'})-[:SECTION_OF]->(d)
WITH d, count(m) AS sections
RETURN d.id AS id, d.title AS title, d.format AS format, sections,
       d.imported_at AS imported_at, d.scope AS scope, d.scope_id AS scope_id
ORDER BY d.id`

	cypherRemove = `MATCH (d:Document {tenant: $tenant, id: $id})
SET d.removed_at = $at, d.sections = 0`

	// cypherLockForRemoval takes the node's write lock (claimed_at), as
	// cypherClaim does, and says whether an import's claim still holds and
	// whether the document is removed already.
	cypherLockForRemoval = `MATCH (d:Document {tenant: $tenant, id: $id})
SET d.claimed_at = $at
RETURN coalesce(d.claimed_until, $at) > $at AS busy, d.removed_at IS NOT NULL AS removed`

	cypherRelease = `MATCH (d:Document {tenant: $tenant, id: $id})
SET d.claimed_until = null, d.running_until = null`
)

// Queries of history.go.
const (
	cypherStatuses = `MATCH (m:Memory {tenant: $tenant})-[:SECTION_OF]->(d:Document {tenant: $tenant, id: $id})
RETURN m.status AS status, count(m) AS n`

	cypherSupersessions = `MATCH (n:Memory {tenant: $tenant})-[:SECTION_OF]->(d:Document {tenant: $tenant, id: $id})
MATCH (n)-[:SUPERSEDES]->(o:Memory {tenant: $tenant})-[:SECTION_OF]->(d)
RETURN count(o) AS n`
)

// ddlDocumentID keeps one Document node per (tenant, id), so concurrent
// first imports of one document MERGE the same node.
const ddlDocumentID = `CREATE CONSTRAINT document_tenant_id IF NOT EXISTS FOR (n:Document) REQUIRE (n.tenant, n.id) IS UNIQUE`
