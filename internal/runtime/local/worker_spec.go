package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/docker"
	"github.com/settdev/sett/internal/worker"
)

// workerSpec is the worker container of controller agent a under the
// local runtime: the same hardening as under the Docker runtime, against
// the host's Docker. The workspace appears at its host path, because the
// cub tells its tools the host path (SETT_WORKSPACE); the worker joins
// Docker's default network (the instance has no Docker network here).
func workerSpec(spec runtime.UpSpec, agent string, a config.AgentConfig) worker.Spec {
	cfg := spec.Config
	ws := worker.Spec{
		Image:             a.Worker.Image,
		Command:           a.WorkerCommand(),
		User:              workerUser(),
		Workspace:         spec.Workspace,
		WorkspaceTarget:   spec.Workspace,
		WorkspaceReadOnly: a.Workspace.Mode != config.WorkspaceReadWrite,
		// The instance records in the workspace's .sett hold the Redis
		// URL: hidden, as from sandboxed local tools.
		Masks:        []string{instance.SettDir(spec.Workspace)},
		NanoCPUs:     int64(a.Resources.CPUs * 1e9),
		Memory:       a.Resources.Memory.Int64(),
		PidsLimit:    cfg.Services.Containers.EffectivePidsLimit(),
		ReadOnlyRoot: !cfg.Services.Containers.WritableRoot,
		Labels: map[string]string{docker.LabelInstance: spec.Name, docker.LabelWorkspace: spec.Workspace,
			docker.LabelComponent: docker.ComponentWorker, docker.LabelAgent: agent},
		NamePrefix:  "sett-" + spec.Name + "-" + agent + "-worker",
		StopTimeout: worker.StopTimeoutFor(a.StopGrace.Std()),
		DockerHost:  os.Getenv("DOCKER_HOST"),
		MaxOutput:   a.MaxOutputBytes.Int64(),
	}
	if vp := cfg.Vault.ResolvedPath(filepath.Dir(spec.ConfigPath)); vp != "" {
		if rel, err := filepath.Rel(spec.Workspace, vp); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			ws.Masks = append(ws.Masks, vp)
		}
	}
	return ws
}

// workerUser is the invoking user, or 65532 for root, as the Docker
// runtime chooses.
func workerUser() string {
	uid, gid := os.Getuid(), os.Getgid()
	if uid <= 0 {
		return docker.DefaultUser
	}
	return fmt.Sprintf("%d:%d", uid, gid)
}
