package blackboard

import "context"

// This file exports to the package's external tests what the benchmark
// of Redis Functions against EVALSHA (BenchmarkScriptCalls) and the tests
// of the two ways of calling scripts need.

// NoopScript is the body of the no-op script the benchmark adds: it
// isolates the cost of the prelude and of the call itself.
const NoopScript = "return {'OK'}"

// Preluded is body as a script is loaded for EVALSHA: lib.lua, a
// newline, then the body.
func Preluded(body string) (string, error) {
	lib, err := scriptFS.ReadFile("scripts/lib.lua")
	if err != nil {
		return "", err
	}
	return string(lib) + "\n" + body, nil
}

// NoopLibrary is a Functions library named name holding NoopScript as
// name_noop, generated as the client's library is (lib.lua once).
func NoopLibrary(name string) (string, error) {
	lib, err := scriptFS.ReadFile("scripts/lib.lua")
	if err != nil {
		return "", err
	}
	return libraryOf(name, string(lib), map[string]string{"noop": NoopScript}), nil
}

// UseFunctions sends c's script calls by FCALL (on) or EVALSHA (off)
// from now on, loading the library or the scripts first.
func UseFunctions(ctx context.Context, c *Client, on bool) error {
	s := c.scripts
	s.reload.Lock()
	defer s.reload.Unlock()
	if on {
		if err := s.loadLibrary(ctx, c.rdb); err != nil {
			return err
		}
	} else if err := s.loadScripts(ctx, c.rdb); err != nil {
		return err
	}
	s.functions.Store(on)
	return nil
}

// UsesFunctions reports whether c's script calls go by FCALL.
func UsesFunctions(c *Client) bool { return c.scripts.functions.Load() }

// LibraryName is the name of c's Functions library.
func LibraryName(c *Client) string { return c.scripts.library }
