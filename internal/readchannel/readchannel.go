// Package readchannel is the memory-first fetch channel (issue 28): while
// a tool runs, its cub answers requests for any artefact of the tool's
// workflow, or one section of it, on a Unix socket whose path is in the
// tool's SETT_READ_SOCKET; `sett-read ID[#section]` is the client. The
// channel needs no credential (the socket is the grant's own, removed when
// the tool ends) and is scoped to the workflow: an artefact of another
// workflow is refused as not found.
//
// Sections: a JSON object payload's sections are its top-level keys; any
// other payload's are its Markdown headings ("## Findings" is section
// "Findings", with everything up to the next heading of the same or a
// higher level). A leading "§" in a requested name is ignored, so the
// memory artifact index's pointers can be passed as they are.
//
// Protocol: the client writes one line, "ID" or "ID#section"; the server
// answers "OK\n" and the text, or "ERR <message>\n", and closes.
package readchannel

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// EnvSocket names the tool's environment variable holding the socket path.
const EnvSocket = "SETT_READ_SOCKET"

// MaxRequest bounds a request line.
const MaxRequest = 1024

// ErrNotFound is returned by a Fetch for an id that is no artefact of the
// workflow.
var ErrNotFound = errors.New("not found")

// Artefact is what the channel serves of one artefact.
type Artefact struct {
	WorkflowID string
	Payload    string
}

// Fetch reads one artefact by id.
type Fetch func(ctx context.Context, id string) (*Artefact, error)

// Sections lists payload's sections in order: a JSON object's top-level
// keys (sorted), else its Markdown headings.
func Sections(payload string) []string {
	if obj, ok := jsonObject(payload); ok {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return keys
	}
	var out []string
	for _, l := range strings.Split(payload, "\n") {
		if _, name, ok := heading(l); ok {
			out = append(out, name)
		}
	}
	return out
}

// Section returns section name of payload (see the package documentation);
// ok is false when payload has no such section. Names compare without
// case and surrounding spaces.
func Section(payload, name string) (string, bool) {
	name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "§"))
	if obj, ok := jsonObject(payload); ok {
		for k, v := range obj {
			if strings.EqualFold(k, name) {
				var s string
				if json.Unmarshal(v, &s) == nil {
					return s, true
				}
				return string(v), true
			}
		}
		return "", false
	}
	lines := strings.Split(payload, "\n")
	for i, l := range lines {
		level, h, ok := heading(l)
		if !ok || !strings.EqualFold(h, name) {
			continue
		}
		end := len(lines)
		for j := i + 1; j < len(lines); j++ {
			if lv, _, ok := heading(lines[j]); ok && lv <= level {
				end = j
				break
			}
		}
		return strings.TrimRight(strings.Join(lines[i:end], "\n"), "\n") + "\n", true
	}
	return "", false
}

func jsonObject(payload string) (map[string]json.RawMessage, bool) {
	t := strings.TrimSpace(payload)
	if !strings.HasPrefix(t, "{") {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(t), &obj) != nil {
		return nil, false
	}
	return obj, true
}

// heading parses a Markdown ATX heading line.
func heading(l string) (level int, name string, ok bool) {
	for level < len(l) && level < 6 && l[level] == '#' {
		level++
	}
	if level == 0 || level >= len(l) || l[level] != ' ' {
		return 0, "", false
	}
	name = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(l[level:]), "#"))
	return level, name, name != ""
}

// Answer is the server's answer to one request line, a pure function of
// the request, the workflow and what fetch returns.
func Answer(ctx context.Context, request, workflowID string, fetch Fetch) (string, error) {
	id, section, hasSection := strings.Cut(strings.TrimSpace(request), "#")
	if id == "" {
		return "", errors.New("empty request: give an artefact id, optionally with #section")
	}
	art, err := fetch(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound) || (err == nil && (art == nil || art.WorkflowID != workflowID)):
		return "", fmt.Errorf("artefact %s: not found in this workflow", id)
	case err != nil:
		return "", fmt.Errorf("artefact %s: %v", id, err)
	}
	if !hasSection {
		return art.Payload, nil
	}
	text, ok := Section(art.Payload, section)
	if !ok {
		return "", fmt.Errorf("artefact %s has no section %q (sections: %s)", id, section, strings.Join(Sections(art.Payload), ", "))
	}
	return text, nil
}

// Server answers one grant's requests until closed.
type Server struct {
	Path string
	ln   net.Listener
	wg   sync.WaitGroup
}

// Listen starts a server on a new socket at path for workflowID's
// artefacts.
func Listen(ctx context.Context, path, workflowID string, fetch Fetch) (*Server, error) {
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	_ = os.Chmod(path, 0o600)
	s := &Server{Path: path, ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				line, err := bufio.NewReader(io.LimitReader(c, MaxRequest)).ReadString('\n')
				if err != nil && line == "" {
					return
				}
				text, err := Answer(ctx, line, workflowID, fetch)
				if err != nil {
					fmt.Fprintf(c, "ERR %s\n", oneLine(err.Error()))
					return
				}
				_, _ = io.WriteString(c, "OK\n"+text)
			}()
		}
	}()
	return s, nil
}

// Close stops the server and removes its socket.
func (s *Server) Close() error {
	err := s.ln.Close()
	s.wg.Wait()
	_ = os.Remove(s.Path)
	return err
}

// Read is the client: it asks the server at path for request and returns
// the text.
func Read(path, request string) (string, error) {
	c, err := net.DialTimeout("unix", path, 10*time.Second)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w (sett-read works only inside a tool run by a cub)", path, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(c, oneLine(request)+"\n"); err != nil {
		return "", err
	}
	data, err := io.ReadAll(c)
	if err != nil {
		return "", err
	}
	status, body, _ := strings.Cut(string(data), "\n")
	if status == "OK" {
		return body, nil
	}
	return "", errors.New(strings.TrimPrefix(status, "ERR "))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
