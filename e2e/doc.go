// Package e2e holds the end-to-end tests: the real images (make images),
// the Docker runtime through its Go API, Redis in containers, and goals
// posted and awaited through internal/blackboard. They need a Docker daemon and
// the images; a missing daemon or image is a failure that says what to do,
// never a skip. With -short they are skipped (unit tests need nothing
// running).
//
// Run them with `make test-e2e` (it builds the images first).
package e2e
