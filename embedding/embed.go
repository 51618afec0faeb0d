// Package embedding provides Mneme's text embedders, the implementations of
// memory.Embedder. Builtin is a dependency-free lexical embedder for Chinese
// and English that hashes words, character n-grams and a small bilingual
// concept lexicon into a fixed-size vector; it is deterministic and good
// enough for demos, tests and small deployments; its words come from package
// tokens, as recall's full-text queries do, so both agree on what a content
// word is. HTTP is a client of any OpenAI-compatible /v1/embeddings
// endpoint, for real embedding models: it batches, retries and checks the
// dimension of every answer.
package embedding
