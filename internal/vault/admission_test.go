package vault

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/priority"
)

// TestAdmissionInScoreOrderAcrossAPause: while paused, a person copies
// 20 task files of mixed priorities into Needs_Action/ with cp; nothing
// starts; after the resume the tasks start highest score first (ties:
// oldest first), as slots free up.
func TestAdmissionInScoreOrderAcrossAPause(t *testing.T) {
	e := newBridgeEnv(t, Options{MaxConcurrentTasks: 3, Weights: priority.DefaultWeights()})
	ctx := context.Background()
	if _, err := e.bb.Pause(ctx, "erin", "copying tasks", "cli"); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	labels := []string{"low", "high", "medium", "7", "low", "high", "2", "medium", "low", "9",
		"high", "low", "medium", "1", "low", "high", "3", "medium", "low", "8"}
	var names []string
	for i, l := range labels {
		name := fmt.Sprintf("task-%02d.md", i)
		write(t, filepath.Join(src, name), fmt.Sprintf("---\npriority: %q\n---\nTask %d (%s).\n", l, i, l))
		names = append(names, filepath.Join(src, name))
	}
	cp := exec.Command("cp", append(names, e.path(NeedsAction, ""))...)
	if out, err := cp.CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	e.pass()
	e.clock.Add(testSettle)
	e.pass()
	e.wantGoals(0)
	if e.br.waiting.Ready != 20 || !e.br.waiting.Paused {
		t.Fatalf("waiting %+v, want 20 ready and held by the pause", e.br.waiting)
	}
	dash, _ := os.ReadFile(filepath.Join(e.dir, DashboardFile))
	if !strings.Contains(string(dash), "20 ready, held while paused") {
		t.Errorf("the dashboard does not say the tasks wait for the resume:\n%s", dash)
	}
	if _, err := e.bb.Resume(ctx, "erin", "cli"); err != nil {
		t.Fatal(err)
	}
	var order []int // scores in admission order
	for len(order) < 20 {
		e.clock.Add(time.Second)
		e.pass()
		ip, err := e.br.listMD(InProgress)
		if err != nil {
			t.Fatal(err)
		}
		if len(ip) == 0 || len(ip) > 3 {
			t.Fatalf("%d tasks in progress, want 1 to 3 (max_concurrent_tasks)", len(ip))
		}
		// Admitted this pass, in the order the pass admitted them: the
		// goals' scores say which; then the tasks finish (the files leave
		// In_Progress/) and free their slots.
		var batch []int
		for _, n := range ip {
			d := readDoc(t, e.path(InProgress, n))
			s, err := priority.ParsePriority(d.Get("priority"), priority.DefaultWeights())
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, s)
			if err := os.Remove(e.path(InProgress, n)); err != nil {
				t.Fatal(err)
			}
		}
		sort.Sort(sort.Reverse(sort.IntSlice(batch)))
		order = append(order, batch...)
	}
	if !sort.IsSorted(sort.Reverse(sort.IntSlice(order))) {
		t.Errorf("admission order by score %v, want highest first", order)
	}
	if len(e.goals()) != 20 {
		t.Errorf("%d goals, want 20", len(e.goals()))
	}
}

func TestCooldownSpacesTaskStarts(t *testing.T) {
	e := newBridgeEnv(t, Options{Cooldown: time.Minute})
	for i := 0; i < 3; i++ {
		write(t, e.path(NeedsAction, "t"+strconv.Itoa(i)+".md"), fmt.Sprintf("Task %d.\n", i))
	}
	e.pass()
	e.clock.Add(testSettle)
	e.pass()
	e.wantGoals(1)
	e.clock.Add(59 * time.Second)
	e.pass()
	e.wantGoals(1)
	e.clock.Add(time.Second)
	e.pass()
	e.wantGoals(2)
}
