package docker

import (
	"path/filepath"

	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

// Labels on everything the runtime creates. Their values are plain names
// and paths, so `docker ps --filter label=dev.sett.instance=NAME` works.
const (
	// LabelInstance is the instance name (containers, network, volume).
	LabelInstance = "dev.sett.instance"
	// LabelComponent is redis, orchestrator, agent or worker (containers);
	// console too in the compose stack.
	LabelComponent = "dev.sett.component"
	// LabelAgent is the agent name (agent and worker containers).
	LabelAgent = "dev.sett.agent"
	// LabelWorkspace is the absolute workspace path (containers, network,
	// volume).
	LabelWorkspace = "dev.sett.workspace"
	// LabelManagedBy names the tool that manages a stack the runtime did
	// not start: ManagedByCompose on the services and the volume of the
	// repository's docker-compose.yml. The runtime never sets it.
	LabelManagedBy = "dev.sett.managed-by"
)

// ManagedByCompose is the value of LabelManagedBy on a compose stack.
const ManagedByCompose = runtime.ManagedByCompose

// Labels that Docker Compose (v1 and v2) sets on what it creates: the
// project on containers and volumes, its directory on containers only.
const (
	LabelComposeProject    = "com.docker.compose.project"
	LabelComposeWorkingDir = "com.docker.compose.project.working_dir"
)

// Values of LabelComponent, and the component names of the record and of
// Logs besides the agents. An agent may not take the name of one of them.
const (
	ComponentRedis        = "redis"
	ComponentOrchestrator = "orchestrator"
	ComponentAgent        = "agent"
	// ComponentWorker marks the ephemeral worker containers of a
	// controller agent: Down removes them with the rest, List does not
	// count them as components.
	ComponentWorker = "worker"
	// ComponentConsole is the web console of the compose stack (`sett
	// ui`); the runtime starts none.
	ComponentConsole = "console"
)

// Container ports of the daemons and of Redis.
const (
	orchestratorPort = "8080/tcp"
	cubPort          = "8081/tcp"
	redisPort        = "6379/tcp"
)

// Paths inside the containers.
const (
	containerConfigPath    = "/etc/sett/sett.yml"
	containerWorkspacePath = "/workspace"
	// containerVaultPath is where the orchestrator (only) sees the vault.
	containerVaultPath = "/sett/vault"
	containerRedisData = "/data"
)

// Default images.
const (
	// DefaultOrchestratorImage is built by `make images`.
	DefaultOrchestratorImage = "sett-orchestrator:local"
)

// Status values of List (runtime.Listing.Status).
const (
	StatusRunning  = "running"  // every container runs
	StatusDegraded = "degraded" // some containers run, not all
	StatusStopped  = "stopped"  // no container runs (or only the data volume is left)
)

func networkName(instance string) string { return "sett-" + instance }

func volumeName(instance string) string { return "sett-" + instance + "-redis" }

func redisContainer(instance string) string { return "sett-" + instance + "-redis" }

func orchestratorContainer(instance string) string { return "sett-" + instance + "-orchestrator" }

func agentContainer(instance, agent string) string { return "sett-" + instance + "-agent-" + agent }

// stateDir holds what the runtime keeps between Up and Down besides the
// volume: the generated Redis password. It lives in the user's state home,
// outside the workspace that agents mount.
func stateDir(workspace, name string) string {
	return instance.StatePath("docker", workspace, name)
}

// legacyStateDir is where earlier versions kept it, inside the workspace;
// a password found there is still used (and saved to stateDir).
func legacyStateDir(workspace, name string) string {
	return filepath.Join(workspace, ".sett", "docker", name)
}

// instanceFilter selects everything of one instance.
func instanceFilter(instance string) client.Filters {
	return make(client.Filters).Add("label", LabelInstance+"="+instance)
}

// baseLabels are the labels of everything an instance owns.
func baseLabels(instance, workspace string) map[string]string {
	return map[string]string{LabelInstance: instance, LabelWorkspace: workspace}
}

// componentName is the name a container has in the record and in Logs:
// the agent name for agents, else the component.
func componentName(labels map[string]string) string {
	switch labels[LabelComponent] {
	case ComponentAgent:
		return labels[LabelAgent]
	case ComponentWorker:
		return "" // a grant's container, not a component of the instance
	}
	return labels[LabelComponent]
}
