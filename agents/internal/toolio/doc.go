// Package toolio is the tool side of Sett's tool contract for
// the agents in agents/: reading the input, printing the one answer or
// the one failure ({"error", "retryable"}) on stdout, and keeping secrets
// out of everything printed.
package toolio
