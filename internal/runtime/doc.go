// Package runtime defines how an instance is started and stopped, with one
// implementation per subpackage: docker (containers through the Docker
// Engine API, the default) and local (processes on the host, for machines
// without Docker and for benchmarks).
package runtime
