// Command sett-read fetches an artefact of the running tool's workflow, or
// one section of it, from the cub that runs the tool (the memory-first
// fetch channel, docs/review-clusters.md):
//
//	sett-read ID            the artefact's whole payload
//	sett-read ID#Section    one section (a JSON payload's top-level key, or
//	                        a Markdown heading; "§Section" works too)
//
// It needs no credential: it talks to the socket in SETT_READ_SOCKET,
// which the cub opens for the tool's run only and which serves the
// tool's own workflow only.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/settdev/sett/internal/readchannel"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv(readchannel.EnvSocket), os.Stdout, os.Stderr))
}

func run(args []string, socket string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] == "" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, "usage: sett-read ID[#section]   (inside a tool run by a sett cub)")
		return 2
	}
	if socket == "" {
		fmt.Fprintf(stderr, "sett-read: %s is not set: sett-read works only inside a tool run by a sett cub\n", readchannel.EnvSocket)
		return 2
	}
	text, err := readchannel.Read(socket, args[0])
	if err != nil {
		fmt.Fprintf(stderr, "sett-read: %v\n", err)
		return 1
	}
	_, _ = io.WriteString(stdout, text)
	return 0
}
