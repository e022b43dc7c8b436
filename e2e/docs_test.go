package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// quickStart returns the command lines of the README's quick start: the
// first ```sh block after "## Quick start".
func quickStart(tb testing.TB, readme string) []string {
	tb.Helper()
	_, after, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		tb.Fatal("README.md has no \"## Quick start\" section")
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		tb.Fatal("the quick start has no ```sh block")
	}
	block, _, ok = strings.Cut(block, "\n```")
	if !ok {
		tb.Fatal("the quick start's ```sh block is not closed")
	}
	return strings.Split(block, "\n")
}

// TestReadmeQuickStart runs the README's quick start as written, with
// bash, from the repository root: it builds the binaries, makes a fresh
// 0700 `mktemp -d` Git repository and runs init, up (local runtime),
// forage --wait, hoard, watch and down there. The one placeholder, <id>,
// is filled with the workflow id that forage printed.
func TestReadmeQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs a local instance (run without -short)")
	}
	for _, tool := range []string{"bash", "git", "make", "redis-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run the README's quick start: install it", tool)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := quickStart(t, string(readme))

	// The script: the block's lines as they are, except that forage's
	// output is kept to fill <id>. A trap purges the instance whatever
	// happens, from the workspace the block cd'ed into.
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	script.WriteString("trap 'if [ \"$PWD\" != \"$SETT_DOCS_ROOT\" ]; then sett down --purge >/dev/null 2>&1 || true; fi' EXIT\n")
	forages := 0
	for _, l := range lines {
		cmd := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(cmd, "sett forage "):
			forages++
			script.WriteString("out=$(" + cmd + ")\nprintf '%s\\n' \"$out\"\n")
			script.WriteString("id=$(printf '%s\\n' \"$out\" | sed -n 's/^Workflow \\([0-9a-f]*\\) .*/\\1/p')\n")
			script.WriteString("[ -n \"$id\" ] || { echo 'forage printed no workflow id' >&2; exit 1; }\n")
			script.WriteString("echo \"workspace mode: $(stat -c %a .)\"\n")
		case strings.Contains(cmd, "<id>"):
			script.WriteString(strings.ReplaceAll(l, "<id>", "\"$id\"") + "\n")
		default:
			script.WriteString(l + "\n")
		}
	}
	if forages != 1 {
		t.Fatalf("the quick start has %d `sett forage` lines, want 1:\n%s", forages, strings.Join(lines, "\n"))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = root
	// mktemp -d makes its 0700 directory under TMPDIR: the test's own.
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "SETT_DOCS_ROOT="+root, "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("quick start output:\n%s", out.String())
	if err != nil {
		t.Fatalf("the README's quick start failed: %v\nscript:\n%s", err, script.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^Workflow [0-9a-f]{8} completed`),
		regexp.MustCompile(`(?m)^workspace mode: 700$`),
		regexp.MustCompile(`GoalDefined [0-9a-f]{8}`),
		regexp.MustCompile(`workflow_completed`),
		regexp.MustCompile(`(?m)^Stopped instance `),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("the quick start's output lacks %s", want)
		}
	}
}
