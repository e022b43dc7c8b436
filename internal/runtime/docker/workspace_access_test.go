//go:build unix

package docker

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/runtime"
)

func TestCheckWorkspaceAccess(t *testing.T) {
	owner := os.Getuid()
	tests := []struct {
		name    string
		mode    os.FileMode
		user    string
		rw      bool
		wantErr string
	}{
		{"0700 for its owner", 0o700, strconv.Itoa(owner) + ":0", false, ""},
		{"0700 for another user", 0o700, "65532:65532", false, "cannot read and enter"},
		{"0755 for another user", 0o755, "65532:65532", false, ""},
		{"0755 for another user of an rw agent", 0o755, "65532:65532", true, "cannot read and enter and write"},
		{"0777 for another user of an rw agent", 0o777, "65532:65532", true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			cfgPath := filepath.Join(ws, "sett.yml")
			if err := os.WriteFile(cfgPath, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(ws, tc.mode); err != nil {
				t.Fatal(err)
			}
			mode := config.WorkspaceReadOnly
			if tc.rw {
				mode = config.WorkspaceReadWrite
			}
			cfg := &config.Config{Agents: map[string]config.AgentConfig{"a": {Workspace: config.WorkspaceConfig{Mode: mode}}}}
			err := checkWorkspaceAccess(runtime.UpSpec{Workspace: ws, ConfigPath: cfgPath, Config: cfg}, tc.user)
			if tc.wantErr == "" {
				if err != nil {
					t.Errorf("error %v, want none", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "services.containers.user") {
				t.Errorf("error %v, want ErrInvalidSpec with %q and the fix", err, tc.wantErr)
			}
		})
	}
}
