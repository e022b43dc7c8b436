package docker

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// composeProject is the Docker Compose project that manages a container,
// volume or network, read from its labels. The repository's
// docker-compose.yml labels its services and its Redis volume as the
// runtime labels what it creates (dev.sett.instance, dev.sett.component,
// ...), so that List shows a compose stack; it adds
// dev.sett.managed-by=compose, and Compose adds its project labels. Such a
// stack belongs to Compose: List shows it, Down and DownByName refuse to
// stop it (ErrComposeManaged), since removing its containers behind
// Compose's back would leave Compose with a project it no longer matches.
type composeProject struct {
	// Name is the project (com.docker.compose.project); "" when only
	// dev.sett.managed-by says compose.
	Name string
	// WorkingDir is the project's directory, where `docker-compose down`
	// stops it (com.docker.compose.project.working_dir, which Compose sets
	// on containers only; "" on a volume).
	WorkingDir string
}

// composeProjectOf returns the compose project that labels name, and
// false when they name none. Either label counts: dev.sett.managed-by=
// compose (docker-compose.yml sets it) or Compose's own project label, so
// that a compose file of one's own that copies the sett labels is never
// torn down by sett either.
func composeProjectOf(labels map[string]string) (composeProject, bool) {
	p := composeProject{Name: labels[LabelComposeProject], WorkingDir: labels[LabelComposeWorkingDir]}
	if labels[LabelManagedBy] != ManagedByCompose && p.Name == "" {
		return composeProject{}, false
	}
	return p, true
}

// composeWorkspace is the workspace a compose-managed object's labels
// name: SETT_WORKSPACE_DIR as the compose file passed it, made absolute
// against the project's directory when it was relative (Compose resolves
// the bind mount's relative path the same way, but not the label's).
func composeWorkspace(labels map[string]string) string {
	ws := labels[LabelWorkspace]
	p, ok := composeProjectOf(labels)
	if ws == "" || filepath.IsAbs(ws) || !ok || p.WorkingDir == "" {
		return ws
	}
	return filepath.Join(p.WorkingDir, ws)
}

// composeProjects collects the distinct compose projects of an instance,
// by project name.
type composeProjects map[string]composeProject

// add records p, keeping a directory another object already gave.
func (ps composeProjects) add(p composeProject) {
	if old, ok := ps[p.Name]; ok && p.WorkingDir == "" {
		p.WorkingDir = old.WorkingDir
	}
	ps[p.Name] = p
}

// refuse decides whether `sett down` of instance name may go on: nil
// when no compose project has it, or when sett's own containers, networks
// or (purge) volumes of that name exist as well (own counts them; Down
// then removes those and leaves the projects alone). Otherwise it is
// ErrComposeManaged, saying which projects run the instance and the
// command that stops each: `docker-compose down` in the project's
// directory (with -v when purge, which deletes the volume too).
func (ps composeProjects) refuse(name string, own int, purge bool) error {
	if len(ps) == 0 || own > 0 {
		return nil
	}
	down := "down"
	if purge {
		down = "down -v"
	}
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Strings(names)
	var dirs []string
	for _, n := range names {
		dirs = append(dirs, fmt.Sprintf("in %s (project %s)", ps[n].dir(), ps[n].name()))
	}
	return fmt.Errorf("%w: sett does not stop instance %s behind Compose's back: run `docker-compose %s` (Compose v2: `docker compose %s`) %s",
		ErrComposeManaged, name, down, down, strings.Join(dirs, ", or "))
}

// name is the project's name for messages.
func (p composeProject) name() string {
	if p.Name == "" {
		return "of unknown name"
	}
	return p.Name
}

// where describes the project for messages: "project P in DIR".
func (p composeProject) where() string {
	if p.WorkingDir == "" {
		return "project " + p.name()
	}
	return "project " + p.name() + " in " + p.WorkingDir
}

// dir is where `docker-compose down` stops the project: its directory, or
// (when only its volume is left, on which Compose sets no directory) a
// description of it.
func (p composeProject) dir() string {
	if p.WorkingDir == "" {
		return "the directory of its docker-compose.yml"
	}
	return p.WorkingDir
}
