package local_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/orchestrator"
	"github.com/settdev/sett/internal/runtime"
)

// vaultInstance starts twoAgents with a vault through `sett up --runtime
// local` (so that the CLI's record exists for status, errors and resume)
// and returns the spec, the vault's path and a runner for sett commands.
func vaultInstance(t *testing.T) (runtime.UpSpec, string, func(args ...string) string) {
	t.Helper()
	spec := newWorkspace(t, twoAgents+"vault: {path: vault, rescan_interval: 1s, settle: 200ms}\n")
	rt := newRuntime(t)
	runtimes := map[string]runtime.Runtime{"local": rt}
	run := func(args ...string) string {
		t.Helper()
		out, errOut, err := cliRun(t, spec.Workspace, runtimes, nil, append(args, "--name", spec.Name)...)
		if err != nil {
			t.Fatalf("sett %s: %v\n%s\n%s", strings.Join(args, " "), err, out, errOut)
		}
		return out
	}
	cleanupInstance(t, rt, spec)
	run("up", "--runtime", "local")
	return spec, filepath.Join(spec.Workspace, "vault"), run
}

// statusJSON is the part of `sett status -o json` these tests read.
type statusJSON struct {
	Paused bool `json:"paused"`
	Vault  *struct {
		OK          bool   `json:"ok"`
		LastError   string `json:"last_error"`
		ErrorsTotal int64  `json:"errors_total"`
	} `json:"vault"`
	StopFiles []string `json:"stop_files"`
}

func readStatus(t *testing.T, run func(args ...string) string) statusJSON {
	t.Helper()
	var s statusJSON
	out := run("status", "-o", "json")
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("sett status -o json: %v\n%s", err, out)
	}
	return s
}

// poll waits, until deadline, for cond to hold.
func poll(t *testing.T, deadline time.Time, what string, cond func() bool) {
	t.Helper()
	eventually.True(t, time.Until(deadline), what, cond)
}

// orchestratorMetric reads one unlabelled sample from the orchestrator's
// /metrics (-1 when absent).
func orchestratorMetric(t *testing.T, spec runtime.UpSpec, name string) float64 {
	t.Helper()
	rec, err := instance.Load(spec.Workspace, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + rec.Components["orchestrator"].HTTPAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(string(b))
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// A vault the orchestrator cannot keep in step — its Needs_Action/ folder
// replaced by a regular file, which fails for root as for anyone — shows
// in `sett status`, `sett errors`, the metrics and the Dashboard; once a
// person puts the folder back, all of them say healthy again.
func TestVaultFailureShowsEverywhereAndClears(t *testing.T) {
	integration(t)
	spec, vault, run := vaultInstance(t)
	deadline := time.Now().Add(2 * time.Minute)
	poll(t, deadline, "a healthy vault in sett status", func() bool { v := readStatus(t, run).Vault; return v != nil && v.OK })
	if got := orchestratorMetric(t, spec, "sett_vault_healthy"); got != 1 {
		t.Errorf("sett_vault_healthy = %v on a healthy vault, want 1", got)
	}

	na := filepath.Join(vault, "Needs_Action")
	if err := os.RemoveAll(na); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(na, []byte("a sync tool's conflict copy, say\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	poll(t, deadline, "the failing vault in sett status", func() bool { v := readStatus(t, run).Vault; return v != nil && !v.OK })
	st := readStatus(t, run)
	if !strings.Contains(st.Vault.LastError, "not a directory") || st.Vault.ErrorsTotal < 1 {
		t.Errorf("status's vault record does not say what fails: %+v", *st.Vault)
	}
	text := run("status")
	if !regexp.MustCompile(`Vault\s.*FAILING since .*not a directory`).MatchString(text) {
		t.Errorf("sett status has no failing Vault line:\n%s", text)
	}
	errs := run("errors")
	if !strings.Contains(errs, "Vault (Sett cannot keep it in step)") || !strings.Contains(errs, "not a directory") {
		t.Errorf("sett errors does not list the vault:\n%s", errs)
	}
	if got := orchestratorMetric(t, spec, "sett_vault_healthy"); got != 0 {
		t.Errorf("sett_vault_healthy = %v while the vault fails, want 0", got)
	}
	if got := orchestratorMetric(t, spec, "sett_vault_pass_failures_total"); got < 1 {
		t.Errorf("sett_vault_pass_failures_total = %v while the vault fails, want at least 1", got)
	}
	dashboard := filepath.Join(vault, "Dashboard.md")
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	poll(t, deadline, "the warning on the Dashboard", func() bool {
		return strings.Contains(read(dashboard), "Sett could not keep the vault in step")
	})

	// Repaired: the folder is back.
	if err := os.Remove(na); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(na, 0o755); err != nil {
		t.Fatal(err)
	}
	poll(t, deadline, "a healthy vault again in sett status", func() bool { v := readStatus(t, run).Vault; return v != nil && v.OK })
	if text := run("status"); !regexp.MustCompile(`Vault\s.*in step`).MatchString(text) || strings.Contains(text, "FAILING") {
		t.Errorf("sett status after the repair:\n%s", text)
	}
	if errs := run("errors"); strings.Contains(errs, "Vault (Sett cannot keep it in step)") {
		t.Errorf("sett errors still lists the repaired vault:\n%s", errs)
	}
	if got := orchestratorMetric(t, spec, "sett_vault_healthy"); got != 1 {
		t.Errorf("sett_vault_healthy = %v after the repair, want 1", got)
	}
	poll(t, deadline, "the Dashboard without the warning", func() bool {
		d := read(dashboard)
		return d != "" && !strings.Contains(d, "Sett could not keep the vault in step")
	})
	// And the vault works: a task written there now is taken.
	if err := os.WriteFile(filepath.Join(na, "after.md"), []byte("Say hello.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	poll(t, deadline, "the task taken from the repaired Needs_Action/", func() bool {
		_, err := os.Stat(filepath.Join(na, "after.md"))
		return os.IsNotExist(err)
	})
}

// `sett resume` with a real .sett_stop file present deletes the file,
// status says not paused (and names no stop file), work is granted again,
// and the orchestrator does not pause again at its next looks.
func TestResumeDeletesTheStopFileAndStaysResumed(t *testing.T) {
	integration(t)
	_, vault, run := vaultInstance(t)
	deadline := time.Now().Add(2 * time.Minute)
	stop := filepath.Join(vault, orchestrator.StopFileName)
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	poll(t, deadline, "the stop file's pause", func() bool { return readStatus(t, run).Paused })
	if st := readStatus(t, run); len(st.StopFiles) != 1 || st.StopFiles[0] != stop {
		t.Errorf("status names the stop files %v, want [%s]", st.StopFiles, stop)
	}
	if text := run("status"); !strings.Contains(text, stop+" exists: the instance stays paused while it does") {
		t.Errorf("sett status has no Stop file line:\n%s", text)
	}

	out := run("resume")
	if !strings.Contains(out, "Deleted the stop file "+stop) || !strings.Contains(out, "Resumed") {
		t.Errorf("sett resume said:\n%s", out)
	}
	if _, err := os.Lstat(stop); !os.IsNotExist(err) {
		t.Fatalf("the stop file is still there after sett resume (%v)", err)
	}
	st := readStatus(t, run)
	if st.Paused || len(st.StopFiles) != 0 {
		t.Errorf("after resume, status says paused=%v stop files=%v", st.Paused, st.StopFiles)
	}
	if text := run("status"); !strings.Contains(text, "not paused") || strings.Contains(text, "Stop file") {
		t.Errorf("sett status after resume:\n%s", text)
	}
	// Work is granted: a goal completes (forage waits for its end).
	run("forage", "--goal", "Plan the release notes")
	// The orchestrator rechecks the stop directories every few seconds
	// (orchestrator's stopFileRecheck, 5 s) besides watching them: over
	// two of those periods the instance must stay resumed. This watches a
	// window; it waits for nothing to happen.
	if eventually.Within(11*time.Second, func() bool { return readStatus(t, run).Paused }) {
		t.Fatal("the instance paused again after sett resume deleted the stop file")
	}
}
