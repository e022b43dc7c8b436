package config

import "strings"

// source remembers, for a Config read from a file, where each value was
// written. A nil *source (a Config built in code) knows nothing, and all its
// methods are safe to call.
type source struct {
	file string
	// lines maps the dotted path of each key or list item in the file to
	// its 1-based line.
	lines map[string]int
	// set holds the paths whose value in the file is not null. Defaults
	// fill only paths that are not set, so an explicit 0 stays 0 and gets
	// validated instead of silently replaced.
	set map[string]bool
}

func newSource(file string) *source {
	return &source{file: file, lines: make(map[string]int), set: make(map[string]bool)}
}

// filename returns the file name, or "" for a Config built in code.
func (s *source) filename() string {
	if s == nil {
		return ""
	}
	return s.file
}

// isSet reports whether the file gave path a non-null value.
func (s *source) isSet(path string) bool {
	return s != nil && s.set[path]
}

// line returns the line of path, or of its closest ancestor that was
// written in the file (a missing key is best located by its section), or 0.
func (s *source) line(path string) int {
	if s == nil {
		return 0
	}
	for path != "" {
		if l, ok := s.lines[path]; ok {
			return l
		}
		path = parentPath(path)
	}
	return 0
}

// forget drops what the file said about path, for a value that something
// else (the environment) has replaced.
func (s *source) forget(path string) {
	if s == nil {
		return
	}
	delete(s.lines, path)
}

// parentPath strips the last element of a dotted path: "a.b[2]" becomes
// "a.b", "a.b" becomes "a", "a" becomes "".
func parentPath(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i >= 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// joinPath appends a key to a dotted path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
