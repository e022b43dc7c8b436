package local

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Program names the local runtime runs.
const (
	orchestratorProgram = "sett-orchestrator"
	cubProgram          = "sett-cub"
	workerProgram       = "sett-worker"
	redisProgram        = "redis-server"
)

// binaries are the absolute paths of the programs an instance runs.
type binaries struct {
	sett         string // started as `sett supervise`
	orchestrator string
	cub          string
	redis        string // "" with an external Redis
	worker       string // "" without controller agents
}

// executable returns the sett binary: Runtime.Executable, else the running
// program.
func (r *Runtime) executable() (string, error) {
	if r.Executable != "" {
		return filepath.Abs(r.Executable)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("%w: cannot locate the sett executable: %v", ErrBinaryNotFound, err)
	}
	return exe, nil
}

func (r *Runtime) lookPath(name string) (string, error) {
	if r.LookPathFunc != nil {
		return r.LookPathFunc(name)
	}
	return exec.LookPath(name)
}

// findBinaries locates the programs: the daemons next to the sett
// executable first (`make build` puts them together in bin/), else on
// PATH; redis-server on PATH unless Redis is external; the worker
// launcher the same way when there are controller agents.
func (r *Runtime) findBinaries(needRedis, needWorker bool) (binaries, error) {
	var b binaries
	exe, err := r.executable()
	if err != nil {
		return b, err
	}
	if !isExecutableFile(exe) {
		return b, fmt.Errorf("%w: the sett executable %s is not an executable file", ErrBinaryNotFound, exe)
	}
	b.sett = exe
	progs := []struct {
		name string
		dst  *string
	}{{orchestratorProgram, &b.orchestrator}, {cubProgram, &b.cub}}
	if needWorker {
		progs = append(progs, struct {
			name string
			dst  *string
		}{workerProgram, &b.worker})
	}
	for _, p := range progs {
		next := filepath.Join(filepath.Dir(exe), p.name)
		if isExecutableFile(next) {
			*p.dst = next
			continue
		}
		found, err := r.lookPath(p.name)
		if err != nil {
			return b, fmt.Errorf("%w: %s is neither next to %s nor on PATH: run `make build` (it puts sett, sett-orchestrator, sett-cub and sett-worker together in bin/)",
				ErrBinaryNotFound, p.name, exe)
		}
		if *p.dst, err = filepath.Abs(found); err != nil {
			return b, fmt.Errorf("local: %w", err)
		}
	}
	if needRedis {
		found, err := r.lookPath(redisProgram)
		if err != nil {
			return b, fmt.Errorf("%w: redis-server not found on PATH: install it (Debian: apt-get install redis-server) or set services.redis.url",
				ErrBinaryNotFound)
		}
		if b.redis, err = filepath.Abs(found); err != nil {
			return b, fmt.Errorf("local: %w", err)
		}
	}
	return b, nil
}

func isExecutableFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}
