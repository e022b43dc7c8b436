package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/instance"
)

func TestConfigChangedWarning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sett.yml")
	if err := os.WriteFile(path, []byte("version: \"1.0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &instance.Record{Name: "demo", Runtime: "local", CreatedAt: time.Now(), ConfigPath: path, ConfigSHA256: fileSHA256(path)}
	if w := configChangedWarning(rec); w != "" {
		t.Fatalf("unchanged file: warning %q", w)
	}
	if w := configChangedWarning(&instance.Record{Name: "old"}); w != "" {
		t.Fatalf("a record without a checksum: warning %q", w)
	}
	if err := os.WriteFile(path, []byte("version: \"1.0\"\nagents: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := configChangedWarning(rec)
	for _, want := range []string{path + " changed since `sett up`", "sett down --name demo", "sett up --name demo --runtime local"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q lacks %q", w, want)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if w := configChangedWarning(rec); !strings.Contains(w, "is gone") {
		t.Errorf("removed file: warning %q, want it to say the file is gone", w)
	}
}
