package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/runtime/docker"
)

const oneAgent = `version: "1.0"
orchestrator:
  bid_timeout: 3s
agents:
  planner:
    image: sett-example-writer:local
    command: ["sett-writer", "--type", "Plan"]
    consumes: ["GoalDefined"]
`

// Down keeps the data volume and the password; Up after it finds the
// earlier artefacts. Down with purge removes everything.
func TestDownThenUpKeepsArtefacts(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	s := newStack(t, h, oneAgent)
	first := s.mustUp()
	wf := s.postGoal("Remember me")
	if w := s.waitWorkflow(wf, 2*time.Minute); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s: %s (%s)", wf, w.Status, w.Outcome)
	}
	before := s.artefacts(wf)

	t.Run("a second instance on the workspace is refused", func(t *testing.T) {
		other := *s
		other.name = s.name + "-b"
		if _, err := h.rt.Up(ctx, other.spec()); !errors.Is(err, docker.ErrAlreadyRunning) || !strings.Contains(err.Error(), "--force") {
			t.Errorf("up of a second instance on %s: %v, want ErrAlreadyRunning suggesting --force", s.dir, err)
		}
		if _, err := h.rt.Up(ctx, s.spec()); !errors.Is(err, docker.ErrAlreadyRunning) || !strings.Contains(err.Error(), "sett down") {
			t.Errorf("up of the running instance again: %v, want ErrAlreadyRunning suggesting sett down", err)
		}
		if left := h.leftovers(t, other.name); len(left) > 0 {
			t.Errorf("the refused instance left %v", left)
		}
	})

	t.Run("logs", func(t *testing.T) {
		var b bytes.Buffer
		if err := h.rt.Logs(ctx, s.rec, "planner", false, &b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "cub starting") {
			t.Errorf("planner log lacks the cub's start:\n%s", b.String())
		}
		// Following ends when the context does, without an error.
		fctx, cancel := context.WithCancel(ctx)
		w := &watchWriter{want: "orchestrator starting", found: cancel}
		if err := h.rt.Logs(fctx, s.rec, "orchestrator", true, w); err != nil {
			t.Errorf("follow: %v", err)
		}
		if !w.seen() {
			t.Errorf("followed orchestrator log lacks %q", w.want)
		}
		if err := h.rt.Logs(ctx, s.rec, "nobody", false, &b); !errors.Is(err, docker.ErrUnknownComponent) || !strings.Contains(err.Error(), "planner") {
			t.Errorf("logs of an unknown component: %v", err)
		}
	})

	if err := h.rt.Down(ctx, s.rec, false); err != nil {
		t.Fatal(err)
	}
	left := h.leftovers(t, s.name)
	if !slices.Equal(left, []string{"volume sett-" + s.name + "-redis"}) {
		t.Fatalf("after down: %v, want only the data volume", left)
	}
	listed := false
	all, err := h.rt.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		if l.Name == s.name {
			listed = l.Status == docker.StatusStopped && len(l.Components) == 0
		}
	}
	if !listed {
		t.Errorf("the stopped instance is not listed as stopped: %+v", all)
	}

	second := s.mustUp()
	if passwordOf(t, second.RedisURL) != passwordOf(t, first.RedisURL) {
		t.Errorf("the password changed across down and up")
	}
	w, err := s.bb.GetWorkflow(ctx, wf)
	if err != nil {
		t.Fatalf("the workflow is gone after down and up: %v", err)
	}
	if w.Status != blackboard.WorkflowCompleted {
		t.Errorf("workflow after down and up: %s", w.Status)
	}
	after := s.artefacts(wf)
	if len(after) != len(before) {
		t.Fatalf("artefacts after down and up: %v, before: %v", types(after), types(before))
	}
	for i := range before {
		if after[i].ID != before[i].ID || after[i].Payload != before[i].Payload {
			t.Errorf("artefact %d: %s, was %s", i, after[i].ID, before[i].ID)
		}
	}
	// And the instance still works.
	wf2 := s.postGoal("And one more")
	if w := s.waitWorkflow(wf2, 2*time.Minute); w.Status != blackboard.WorkflowCompleted {
		t.Errorf("workflow after down and up: %s (%s)", w.Status, w.Outcome)
	}

	if err := h.rt.Down(ctx, s.rec, true); err != nil {
		t.Fatal(err)
	}
	if left := h.leftovers(t, s.name); len(left) > 0 {
		t.Errorf("after down --purge: %v", left)
	}
	if _, err := os.Stat(filepath.Join(s.dir, ".sett", "docker", s.name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("down --purge kept the saved password (%v)", err)
	}
}

// watchWriter calls found once its input contains want.
type watchWriter struct {
	want  string
	found func()
	mu    sync.Mutex
	buf   bytes.Buffer
	hit   bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.hit && strings.Contains(w.buf.String(), w.want) {
		w.hit = true
		w.found()
	}
	return len(p), nil
}

func (w *watchWriter) seen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hit
}
