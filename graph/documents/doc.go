// Package documents is the Neo4j store of imported knowledge-base
// documents: a (:Document {tenant, id, …}) node per document, and a
// (:Memory)-[:SECTION_OF {key, digest, headings, position, part}]->(:Document)
// edge from every memory a section became, superseded and archived ones
// included, so a document's history stays readable. Store implements
// documents.Store over the transaction runner it shares with package graph.
package documents
