package instance

import (
	"errors"
	"testing"
	"time"
)

// A stopped instance keeps its record (name, workspace, runtime), which
// All and InWorkspace list; Find, which serves the commands that need a
// running instance, skips it.
func TestStoppedRecordIsRememberedButNotFound(t *testing.T) {
	tests := []struct {
		name      string
		running   []string // records of the workspace left running
		stopped   []string // records marked stopped
		find      string   // the name asked of Find ("" for the workspace's)
		wantFound string   // "" for ErrNoInstance
	}{
		{"the only instance, stopped", nil, []string{"a"}, "", ""},
		{"the only instance, stopped, by name", nil, []string{"a"}, "a", ""},
		{"a stopped one does not make the running one ambiguous", []string{"b"}, []string{"a"}, "", "b"},
		{"the running one by name", []string{"b"}, []string{"a"}, "b", "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			ws := t.TempDir()
			for _, n := range append(append([]string{}, tt.running...), tt.stopped...) {
				if err := Save(&Record{Name: n, Runtime: RuntimeLocal, Workspace: ws, SupervisorPID: 42, CreatedAt: time.Unix(1, 0)}); err != nil {
					t.Fatal(err)
				}
			}
			at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			for _, n := range tt.stopped {
				if err := MarkStopped(ws, n, at); err != nil {
					t.Fatal(err)
				}
				r, err := Load(ws, n)
				if err != nil || !r.Stopped() || !r.StoppedAt.Equal(at) || r.SupervisorPID != 0 || r.Runtime != RuntimeLocal {
					t.Fatalf("stopped record %+v, %v", r, err)
				}
			}
			recs, err := InWorkspace(ws)
			if err != nil || len(recs) != len(tt.running)+len(tt.stopped) {
				t.Fatalf("InWorkspace = %d records, %v; want every one, stopped or not", len(recs), err)
			}
			r, err := Find(ws, tt.find)
			switch {
			case tt.wantFound == "" && !errors.Is(err, ErrNoInstance):
				t.Errorf("Find = %+v, %v; want ErrNoInstance", r, err)
			case tt.wantFound != "" && (err != nil || r.Name != tt.wantFound):
				t.Errorf("Find = %+v, %v; want %s", r, err, tt.wantFound)
			}
		})
	}
}

func TestMarkStoppedWithoutARecord(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if err := MarkStopped(t.TempDir(), "none", time.Now()); err != nil {
		t.Errorf("MarkStopped of nothing: %v", err)
	}
}

func TestSaveClearsStopped(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ws := t.TempDir()
	rec := &Record{Name: "a", Runtime: RuntimeDocker, Workspace: ws, CreatedAt: time.Unix(1, 0)}
	if err := Save(rec); err != nil {
		t.Fatal(err)
	}
	if err := MarkStopped(ws, "a", time.Now()); err != nil {
		t.Fatal(err)
	}
	// `sett up` saves the new record of the started instance.
	if err := Save(&Record{Name: "a", Runtime: RuntimeDocker, Workspace: ws, CreatedAt: time.Unix(2, 0)}); err != nil {
		t.Fatal(err)
	}
	if r, err := Find(ws, ""); err != nil || r.Stopped() {
		t.Errorf("after a new up: %+v, %v", r, err)
	}
}
