// Package observability holds what every Sett daemon shares for being
// watched: the zerolog logger set-up, and the HTTP server for /healthz,
// /readyz and /metrics.
package observability
