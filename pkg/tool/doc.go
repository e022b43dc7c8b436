// Package tool is the tool side of Sett's tool contract, for anyone
// writing a tool in Go (the agents in agents/ use it): a tool is any
// program that the cub runs once per grant, reading one JSON document
// ([Input]) on stdin and printing one on stdout — its answer ([Answer],
// [WriteAnswer]) or its failure ([WriteFailure]: {"error", "retryable"}),
// with the secrets of a [Redactor] taken out. Logs go to stderr.
//
// The contract's documents are the cub's own types (aliases), so what
// this package writes is what the cub accepts. docs/guide.md ("Writing
// an agent") describes the contract for tools in any language.
package tool
