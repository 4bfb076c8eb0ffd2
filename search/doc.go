// Package search owns the lexical index of an endpoint's tools: how text
// becomes terms, how a tool's fields are weighted, the BM25 scores a
// publish computes once per term and tool, and how a query adds them up.
//
// The index is a set of postings blocks, one per term, each holding the
// tools the term scores best in, best first and capped at MaxPostings, so
// a query reads at most MaxQueryTerms blocks whatever the catalogue size.
// Where the blocks live (a revision in the store, or memory) is the
// caller's: Search takes a function that fetches one.
//
// search is pure and deterministic and does no I/O. It imports no other
// Rukh package.
package search
