package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/orchestrator"
)

// stopFileDirs are the directories whose .sett_stop file pauses the
// instance of workspace: the workspace and, when sett.yml names one, the
// vault (the orchestrator watches the same two).
func stopFileDirs(app *App, workspace string) []string {
	dirs := []string{workspace}
	cfgPath := resolveConfigPath("", app.env("SETT_CONFIG"), app.Dir, workspace)
	cfg, _, err := config.Load(cfgPath)
	if err != nil || !cfg.Vault.Enabled() {
		return dirs
	}
	return append(dirs, cfg.Vault.ResolvedPath(filepath.Dir(cfgPath)))
}

// presentStopFiles returns the stop files that exist in dirs.
func presentStopFiles(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		p := filepath.Join(d, orchestrator.StopFileName)
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// removeStopFiles deletes the stop files in dirs before a resume: while
// one exists the instance is meant to be paused, so a resume that left it
// would be undone (or, worse, leave status and the file disagreeing). It
// returns the files removed; on an error nothing should be resumed, and
// the error says what to do.
func removeStopFiles(dirs []string) ([]string, error) {
	var removed []string
	for _, p := range presentStopFiles(dirs) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("not resumed: the stop file %s pauses the instance and cannot be deleted (%v): delete it (rm %s), which resumes the instance by itself", p, err, p)
		}
		removed = append(removed, p)
	}
	return removed, nil
}
