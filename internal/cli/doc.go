// Package cli builds the `sett` command tree (cobra). The tree is built by
// NewRoot from an App that carries every dependency — output streams,
// environment, runtimes — so commands are tested by running them against
// buffers. Commands write through cmd.OutOrStdout() and return errors; the
// exit code comes from ExitCode.
package cli
