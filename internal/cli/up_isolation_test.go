package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

// warningRuntime is a stubRuntime whose Up reports one isolation warning.
type warningRuntime struct{ *stubRuntime }

func (w warningRuntime) Up(ctx context.Context, spec runtime.UpSpec) (*instance.Record, error) {
	if spec.WarnFunc != nil {
		spec.WarnFunc("tools can read the state home")
	}
	return w.stubRuntime.Up(ctx, spec)
}

// sett up moves a record an earlier version left in the workspace out of
// it, says so, prints the runtime's isolation warnings on stderr, and
// names where the record (with the password) now is.
func TestUpMovesLegacyRecordsAndPrintsIsolationWarnings(t *testing.T) {
	ws := lifecycleWorkspace(t, lifecycleConfig+"instance: demo\n")
	legacy := filepath.Join(ws, ".sett", "instances", "old.json")
	if err := os.MkdirAll(filepath.Dir(legacy), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(instance.Record{Name: "old", Runtime: "local", Workspace: ws, RedisURL: "redis://:pw@127.0.0.1:1/0"})
	if err := os.WriteFile(legacy, b, 0o600); err != nil {
		t.Fatal(err)
	}
	rt := warningRuntime{&stubRuntime{name: "local", upRec: recordFor("local")}}
	out, errOut, err := runLifecycle(t, ws, map[string]runtime.Runtime{"local": rt}, nil, "up", "--runtime", "local")
	if err != nil {
		t.Fatalf("sett up: %v", err)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("the legacy record is still in the workspace: %v", err)
	}
	if r, err := instance.Load(ws, "old"); err != nil || r.RedisURL == "" {
		t.Errorf("the moved record: %+v, %v", r, err)
	}
	if !strings.Contains(errOut, "moved 1 instance record(s) out of the workspace") {
		t.Errorf("stderr lacks the migration note:\n%s", errOut)
	}
	if strings.Count(errOut, "warning: tools can read the state home") != 1 {
		t.Errorf("stderr should carry the runtime's warning once:\n%s", errOut)
	}
	if !strings.Contains(out, instance.RecordPath(ws, "demo")) {
		t.Errorf("the summary does not say where the record is:\n%s", out)
	}
}
