package bench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/settdev/sett/internal/daemonproc"
)

// scenarioRunner is a runner for one scenario on the real daemons, built
// into workDir/bin: what the scenario tests share with Run.
func scenarioRunner(ctx context.Context, t *testing.T, opts Options, workDir string) *runner {
	t.Helper()
	r := &runner{opts: opts, workDir: workDir, figures: map[string]Figure{}, report: &Report{Options: opts}}
	var err error
	if r.root, err = daemonproc.RepoRoot(); err != nil {
		t.Fatal(err)
	}
	if r.bins, err = buildBinaries(ctx, r.root, filepath.Join(r.workDir, "bin")); err != nil {
		t.Fatal(err)
	}
	return r
}
