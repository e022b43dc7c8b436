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

func TestRecordsLiveOutsideTheWorkspace(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	ws := t.TempDir()
	if err := Save(&Record{Name: "app", Runtime: RuntimeLocal, Workspace: ws, RedisURL: "redis://:secret@127.0.0.1:1/0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(SettDir(ws)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Save created %s (err %v): the workspace must hold no record", SettDir(ws), err)
	}
	st, err := os.Stat(filepath.Join(state, "sett", "instances"))
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("state home instances dir: %v %v, want mode 0700", st, err)
	}
	if r, err := Load(ws, "app"); err != nil || r.RedisURL == "" {
		t.Fatalf("Load = %+v, %v", r, err)
	}
}

func TestLegacyRecordsAreReadAndMigrated(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ws := t.TempDir()
	legacy := legacyRecordPath(ws, "old")
	if err := writeJSON(legacy, &Record{Name: "old", Runtime: RuntimeLocal, Workspace: ws, RedisURL: "redis://:pw@127.0.0.1:1/0"}); err != nil {
		t.Fatal(err)
	}
	if recs, err := InWorkspace(ws); err != nil || len(recs) != 1 || recs[0].Name != "old" {
		t.Fatalf("InWorkspace before migration = %v, %v", recs, err)
	}
	moved, err := MigrateLegacy(ws)
	if err != nil || len(moved) != 1 || moved[0] != legacy {
		t.Fatalf("MigrateLegacy = %v, %v", moved, err)
	}
	if _, err := os.Stat(legacy); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("legacy record still in the workspace: %v", err)
	}
	r, err := Load(ws, "old")
	if err != nil || r.RedisURL != "redis://:pw@127.0.0.1:1/0" {
		t.Fatalf("Load after migration = %+v, %v", r, err)
	}
	if all, err := All(); err != nil || len(all) != 1 {
		t.Fatalf("All = %v, %v", all, err)
	}
}
