package secretfd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
)

// EnvVar names the descriptor the secrets arrive on, in the daemon's
// environment. It holds a number, never a secret.
const EnvVar = "SETT_SECRETS_FD"

// maxSize bounds what Read accepts: secrets are a few hundred bytes.
const maxSize = 64 << 10

// Attach makes cmd receive secrets on an inherited pipe: it writes them as
// one JSON object into a new pipe, closes the write end, appends the read
// end to cmd.ExtraFiles and sets EnvVar in cmd.Env to its descriptor
// number. Call it after setting cmd.Env and before cmd.Start; the returned
// function closes the parent's copy of the read end and must be called
// after Start (whether or not Start succeeded).
//
// Secrets small enough for a pipe buffer (64 KiB on Linux) never block;
// larger ones are refused.
func Attach(cmd *exec.Cmd, secrets map[string]string) (closeFunc func(), err error) {
	b, err := json.Marshal(secrets)
	if err != nil {
		return nil, fmt.Errorf("secretfd: encode: %w", err)
	}
	if len(b) > 4096 {
		return nil, fmt.Errorf("secretfd: %d bytes of secrets; at most 4096 fit in a pipe without a reader", len(b))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("secretfd: %w", err)
	}
	_, werr := w.Write(b)
	cerr := w.Close()
	if werr != nil || cerr != nil {
		r.Close()
		return nil, fmt.Errorf("secretfd: write: %v %v", werr, cerr)
	}
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Env = append(cmd.Env, EnvVar+"="+strconv.Itoa(fd))
	return func() { _ = r.Close() }, nil
}

// Read returns the secrets passed by Attach, or nil when EnvVar is not set
// (a daemon started by hand, or in a container, reads its environment
// instead). It reads the descriptor to the end and closes it, and unsets
// EnvVar, so tools started later inherit neither.
func Read(lookupEnv func(string) (string, bool)) (map[string]string, error) {
	v, ok := lookupEnv(EnvVar)
	if !ok || v == "" {
		return nil, nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("secretfd: %s=%q is not a descriptor number of 3 or more", EnvVar, v)
	}
	f := os.NewFile(uintptr(fd), "secrets")
	if f == nil {
		return nil, fmt.Errorf("secretfd: %s=%d is not an open descriptor", EnvVar, fd)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return nil, fmt.Errorf("secretfd: read descriptor %d: %w", fd, err)
	}
	if len(b) > maxSize {
		return nil, fmt.Errorf("secretfd: more than %d bytes on descriptor %d", maxSize, fd)
	}
	var out map[string]string
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("secretfd: descriptor %d does not hold a JSON object of strings: %w", fd, err)
	}
	_ = os.Unsetenv(EnvVar)
	return out, nil
}

// LookupEnv returns a lookup that answers from secrets first, then from
// next (normally os.LookupEnv).
func LookupEnv(secrets map[string]string, next func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if v, ok := secrets[name]; ok {
			return v, true
		}
		return next(name)
	}
}
