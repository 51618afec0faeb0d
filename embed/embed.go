// Package embed provides Mneme's text embedders, the implementations of
// memory.Embedder. Builtin is a dependency-free lexical embedder for Chinese
// and English that hashes words, character n-grams and a small bilingual
// concept lexicon into a fixed-size vector; it is deterministic and good
// enough for demos, tests and small deployments. The package also exposes the
// tokenizer it uses (Keywords) so recall can build stopword-free full-text
// queries that agree with the embedder about what a content word is.
package embed
