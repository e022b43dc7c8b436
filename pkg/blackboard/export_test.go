package blackboard

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"
)

// This file exports to the package's external tests what only the
// benchmark of Redis Functions against EVALSHA needs
// (BenchmarkScriptCalls in script_calls_bench_test.go). The client itself
// runs scripts by EVALSHA only; scripts.go says why.

// NoopScript is the body of the no-op script the benchmark adds to the
// library: it isolates the cost of the prelude and of the call itself.
const NoopScript = "return {'OK'}"

// Preluded is body as the client loads a script: lib.lua, a newline,
// then the body.
func Preluded(body string) (string, error) {
	lib, err := scriptFS.ReadFile("scripts/lib.lua")
	if err != nil {
		return "", err
	}
	return string(lib) + "\n" + body, nil
}

// FunctionLibrary is the text of a Redis Functions library named name
// that holds every script the client runs, and NoopScript as "noop":
// lib.lua once at the top, then each body wrapped in a function of the
// script's name (name_<script>) that receives KEYS and ARGV as its
// arguments. shas maps each script's EVALSHA digest (as loaded by the
// client) to its function, so that a hook can send the same call as
// FCALL. The .lua files are not changed: the wrapping is generated.
func FunctionLibrary(name string) (text string, shas map[string]string, err error) {
	lib, err := scriptFS.ReadFile("scripts/lib.lua")
	if err != nil {
		return "", nil, err
	}
	files, err := fs.Glob(scriptFS, "scripts/*.lua")
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!lua name=%s\n%s\n", name, lib)
	wrap := func(fn, body string) {
		fmt.Fprintf(&b, "redis.register_function(%q, function(KEYS, ARGV)\n%s\nend)\n", fn, body)
	}
	shas = map[string]string{}
	for _, f := range files {
		script := strings.TrimSuffix(strings.TrimPrefix(f, "scripts/"), ".lua")
		if script == "lib" {
			continue
		}
		body, err := scriptFS.ReadFile(f)
		if err != nil {
			return "", nil, err
		}
		full, err := scriptBody(script)
		if err != nil {
			return "", nil, err
		}
		sum := sha1.Sum([]byte(full))
		fn := name + "_" + script
		shas[hex.EncodeToString(sum[:])] = fn
		wrap(fn, string(body))
	}
	wrap(name+"_noop", NoopScript)
	return b.String(), shas, nil
}
