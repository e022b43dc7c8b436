package scaffold

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFilesListsTheScaffold(t *testing.T) {
	var paths []string
	for _, f := range Files() {
		paths = append(paths, f.Path)
		if len(f.Content) == 0 {
			t.Errorf("%s is empty", f.Path)
		}
		wantMode := os.FileMode(0o644)
		if filepath.Ext(f.Path) == ".sh" {
			wantMode = 0o755
		}
		if f.Mode != wantMode {
			t.Errorf("%s mode %v, want %v", f.Path, f.Mode, wantMode)
		}
	}
	want := []string{"agents/hello/README.md", "agents/hello/hello.sh", "sett.yml"}
	if !slices.Equal(paths, want) {
		t.Errorf("files %v, want %v", paths, want)
	}
}

func TestWriteRefusesExistingFilesUnlessForced(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "agents", "hello", "hello.sh")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, false); !errors.Is(err, ErrExists) {
		t.Fatalf("Write = %v, want ErrExists", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sett.yml")); !errors.Is(err, os.ErrNotExist) {
		t.Error("Write wrote sett.yml although it refused")
	}
	written, err := Write(dir, true)
	if err != nil || len(written) != 3 {
		t.Fatalf("Write(force) = %v, %v", written, err)
	}
	st, err := os.Stat(script)
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("overwritten script mode %v (%v), want 0755", st.Mode().Perm(), err)
	}
}

func TestEnsureGitignore(t *testing.T) {
	tests := []struct {
		name     string
		existing *string // nil: no file
		want     string
		changed  bool
	}{
		{"creates the file", nil, ".sett/\n", true},
		{"appends after a last line without newline", ptr("bin/"), "bin/\n.sett/\n", true},
		{"appends to a file with newline", ptr("bin/\n"), "bin/\n.sett/\n", true},
		{"keeps an existing entry", ptr("bin/\n/.sett\n"), "bin/\n/.sett\n", false},
		{"keeps an existing entry with spaces", ptr("  .sett/  \n"), "  .sett/  \n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, ".gitignore")
			if tt.existing != nil {
				if err := os.WriteFile(p, []byte(*tt.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			changed, err := EnsureGitignore(dir)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(p)
			if string(b) != tt.want || changed != tt.changed {
				t.Errorf("got %q (changed %v), want %q (changed %v)", b, changed, tt.want, tt.changed)
			}
		})
	}
}

func ptr(s string) *string { return &s }
