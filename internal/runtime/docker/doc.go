// Package docker is the default runtime of `sett up`: it runs an instance
// as containers through the Docker Engine API (the moby client), so that
// nothing but a Docker daemon and the images is needed on the host.
//
// # What Up creates
//
// For an instance <name> on workspace <ws>:
//
//	network    sett-<name>                    a bridge network for the instance
//	volume     sett-<name>-redis              Redis data (append-only file); kept by Down
//	container  sett-<name>-redis              services.redis.image, --requirepass, --appendonly yes
//	container  sett-<name>-agent-<agent>      one per agent: its image (the cub is the entrypoint)
//	container  sett-<name>-orchestrator      the orchestrator image (sett-orchestrator:local)
//
// Every one of them carries the labels dev.sett.instance=<name> and
// dev.sett.workspace=<ws>; containers also carry dev.sett.component
// (redis, orchestrator or agent) and agents dev.sett.agent=<agent>. List,
// Down and Logs find everything through these labels, so they work even
// when the instance record is gone.
//
// # Compose stacks
//
// The repository's docker-compose.yml gives its services and its Redis
// volume the same labels (with the console as component "console"), plus
// dev.sett.managed-by=compose; Compose adds com.docker.compose.project and,
// on containers, the project's working directory. List shows such a stack
// as an instance with Listing.ManagedBy "compose", one per project. Down,
// DownByName and Up never touch it: Down and DownByName return
// ErrComposeManaged, naming the `docker-compose down` to run in the
// project's directory; Up refuses an instance of its name, and (unless
// forced) one on its workspace, saying the same.
//
// Redis is published on loopback only, on a port that was free when Up
// ran and that stays fixed, so that the record (RedisURL, HTTPAddr) stays
// right when a container or the daemon restarts; the orchestrator's and
// each cub's HTTP port (8080, 8081) likewise, so that Up can check /readyz
// from the host. The daemons reach Redis on the network
// by the container name; their SETT_REDIS_URL carries the password, which
// the cub never passes on to tools.
//
// Containers run with restart policy unless-stopped, no-new-privileges and
// the configured CPU and memory limits. The orchestrator and the agents
// run as a non-root user (the owner of the workspace when that is not
// root, so that rw workspaces stay writable and their files keep their
// owner; else 65532) with every capability dropped. Inside agents the
// workspace is at /workspace (read-only unless workspace.mode is rw), and
// its .sett directory — instance records holding the Redis password — is
// hidden under an empty read-only tmpfs. sett.yml is mounted read-only at
// /etc/sett/sett.yml.
//
// # Up
//
// Up checks first what can be checked without creating anything (the
// images, conflicting instances), then creates the network, the volume and
// Redis, waits until Redis answers PING with the password, starts the
// agents, waits until every cub answers /readyz, and starts the
// orchestrator last so that its first look at agent liveness sees every
// agent. Each container gets its restart policy only once it has been
// ready: a component that exits while Up waits stays exited and fails Up
// with its exit code and the tail of its log. On any failure (or when ctx
// is cancelled) Up removes what it created: containers, network, and the
// volume and state directory only when it created them.
//
// The generated Redis password is kept with the data, in the state
// directory <ws>/.sett/docker/<name>/redis.password (mode 0600), so that
// Up after Down reuses it; Down with purge removes it with the volume.
//
// # Connection
//
// New does not connect: the client is created and the daemon pinged on
// the first call that needs it, so that `sett` works on machines without
// Docker for every other command. The daemon is found as the docker CLI
// finds it through the environment (DOCKER_HOST, DOCKER_TLS_VERIFY,
// DOCKER_CERT_PATH, DOCKER_API_VERSION) or Options.Host; docker contexts
// are not read.
package docker
