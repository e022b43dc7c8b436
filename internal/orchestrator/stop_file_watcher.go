package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
)

// StopFileName is the scheduling rules' stop hook: while this file exists in the
// workspace (or the vault), the instance is paused.
const StopFileName = ".sett_stop"

// stopFileRecheck is how often the watcher looks at the directories even
// without a file event: the fallback for file systems (some bind mounts)
// that do not deliver them.
const stopFileRecheck = 5 * time.Second

// StopFileWatcher pauses the instance while a .sett_stop file exists in
// one of its directories and resumes it when the last one is gone. It
// lifts only a pause that a stop file made (the pause records its
// source), never one a person made with `sett pause`.
type StopFileWatcher struct {
	bb   *blackboard.Client
	dirs []string
	log  zerolog.Logger
	// PresentFunc reports whether the file exists in dir; os.Stat unless
	// a test replaces it.
	PresentFunc func(dir string) bool
}

// NewStopFileWatcher watches dirs (empty entries are skipped).
func NewStopFileWatcher(bb *blackboard.Client, dirs []string, log zerolog.Logger) *StopFileWatcher {
	var keep []string
	for _, d := range dirs {
		if d != "" {
			keep = append(keep, d)
		}
	}
	return &StopFileWatcher{bb: bb, dirs: keep, log: log.With().Str("component", "stop_file_watcher").Logger(),
		PresentFunc: func(dir string) bool {
			_, err := os.Stat(filepath.Join(dir, StopFileName))
			return err == nil
		}}
}

// Run watches until ctx ends.
func (w *StopFileWatcher) Run(ctx context.Context) error {
	if len(w.dirs) == 0 {
		<-ctx.Done()
		return nil
	}
	events := make(chan struct{}, 1)
	fw, err := fsnotify.NewWatcher()
	if err == nil {
		defer fw.Close()
		for _, d := range w.dirs {
			if aerr := fw.Add(d); aerr != nil {
				w.log.Warn().Err(aerr).Str("dir", d).Msg("cannot watch for the stop file; looking every few seconds instead")
			}
		}
		go func() {
			for {
				select {
				case ev, ok := <-fw.Events:
					if !ok {
						return
					}
					if filepath.Base(ev.Name) == StopFileName {
						select {
						case events <- struct{}{}:
						default:
						}
					}
				case _, ok := <-fw.Errors:
					if !ok {
						return
					}
				}
			}
		}()
	} else {
		w.log.Warn().Err(err).Msg("file events unavailable; looking for the stop file every few seconds")
	}
	tick := time.NewTicker(stopFileRecheck)
	defer tick.Stop()
	last := -1 // unknown
	for {
		present, dir := w.present()
		if now := boolInt(present); now != last {
			if err := w.apply(ctx, present, dir); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				w.log.Warn().Err(err).Msg("applying the stop file failed; retrying")
			} else {
				last = now
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-events:
		case <-tick.C:
		}
	}
}

func (w *StopFileWatcher) present() (bool, string) {
	for _, d := range w.dirs {
		if w.PresentFunc(d) {
			return true, d
		}
	}
	return false, ""
}

func (w *StopFileWatcher) apply(ctx context.Context, present bool, dir string) error {
	if present {
		changed, err := w.bb.Pause(ctx, "stop file", "the file "+filepath.Join(dir, StopFileName)+" exists; delete it to resume", blackboard.ControlFromStopFile)
		if err == nil && changed {
			w.log.Warn().Str("dir", dir).Msg("paused: the stop file exists")
		}
		return err
	}
	changed, err := w.bb.Resume(ctx, "stop file", blackboard.ControlFromStopFile)
	if err == nil && changed {
		w.log.Info().Str("dirs", strings.Join(w.dirs, ", ")).Msg("resumed: the stop file is gone")
	}
	return err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
