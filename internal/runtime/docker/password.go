package docker

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/settdev/sett/internal/runtime"
)

// passwordFile is the name of the generated Redis password in the state
// directory.
const passwordFile = "redis.password"

// password is the Redis password of an instance Up starts Redis for.
type password struct {
	value string
	// generated is set when value is new and must be saved.
	generated bool
	// legacyDir is the workspace directory an earlier version saved value
	// in; save removes it.
	legacyDir string
}

// loadPassword returns services.redis.password when set, else the one a
// previous Up saved with the data, else a new one.
func loadPassword(spec runtime.UpSpec) (password, error) {
	if pw := spec.Config.Services.Redis.Password; pw != "" {
		return password{value: pw}, nil
	}
	if filepath.IsAbs(spec.Workspace) {
		for i, dir := range []string{stateDir(spec.Workspace, spec.Name), legacyStateDir(spec.Workspace, spec.Name)} {
			b, err := os.ReadFile(filepath.Join(dir, passwordFile))
			if err == nil && strings.TrimSpace(string(b)) != "" {
				// One found in the workspace (an earlier version's) is
				// saved to the state home and removed from the workspace.
				pw := password{value: strings.TrimSpace(string(b))}
				if i > 0 {
					pw.generated, pw.legacyDir = true, dir
				}
				return pw, nil
			}
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return password{}, fmt.Errorf("docker: read the saved Redis password: %w", err)
			}
		}
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return password{}, fmt.Errorf("docker: generate a Redis password: %w", err)
	}
	return password{value: hex.EncodeToString(b[:]), generated: true}, nil
}

// save writes the password into dir (mode 0600).
func (pw password) save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("docker: save the Redis password: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, passwordFile), []byte(pw.value+"\n"), 0o600); err != nil {
		return fmt.Errorf("docker: save the Redis password: %w", err)
	}
	if pw.legacyDir != "" {
		_ = os.RemoveAll(pw.legacyDir) // best effort: the password is saved in the state home now
	}
	return nil
}
