package instance

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSameNameInTwoWorkspacesKeepsBothPointers(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	a, b := t.TempDir(), t.TempDir()
	for _, ws := range []string{a, b} {
		if err := Save(&Record{Name: "app", Runtime: RuntimeLocal, Workspace: ws}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := All()
	if err != nil || len(all) != 2 {
		t.Fatalf("All = %d records (%v), want both workspaces' app", len(all), err)
	}
	if err := Remove(a, "app"); err != nil {
		t.Fatal(err)
	}
	all, err = All()
	if err != nil || len(all) != 1 || all[0].Workspace != b {
		t.Fatalf("after removing a's app: %+v (%v), want only b's", all, err)
	}
	if _, err := Find(b, ""); err != nil {
		t.Errorf("Find in b: %v", err)
	}
	if _, err := Load(a, "app"); !errors.Is(err, ErrNoInstance) {
		t.Errorf("Load a's removed record: %v", err)
	}
}

func TestRemoveDeletesALegacyPointerOnlyForItsWorkspace(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	a, b := t.TempDir(), t.TempDir()
	if err := Save(&Record{Name: "app", Runtime: RuntimeLocal, Workspace: a}); err != nil {
		t.Fatal(err)
	}
	legacy := legacyPointerPath("app")
	if err := writeJSON(legacy, pointer{Name: "app", Runtime: RuntimeLocal, Workspace: a}); err != nil {
		t.Fatal(err)
	}
	if all, err := All(); err != nil || len(all) != 1 {
		t.Fatalf("All with a legacy and a current pointer to one record = %d records (%v), want 1", len(all), err)
	}
	if err := Remove(b, "app"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy); err != nil {
		t.Errorf("removing b's app deleted a's legacy pointer: %v", err)
	}
	if err := Remove(a, "app"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("legacy pointer after removing a's app: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(StateHome(), "instances"))
	if len(entries) != 0 {
		t.Errorf("pointers left: %v", entries)
	}
}
