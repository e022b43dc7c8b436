package blackboard_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// sent records the commands a client sends ("fcall", "evalsha",
// "function load", ...), pipelined ones included.
type sent struct {
	mu   sync.Mutex
	cmds []string
}

func (h *sent) record(cmd redis.Cmder) {
	name := cmd.Name()
	if args := cmd.Args(); (name == "function" || name == "script") && len(args) > 1 {
		name += " " + strings.ToLower(args[1].(string))
	}
	h.mu.Lock()
	h.cmds = append(h.cmds, name)
	h.mu.Unlock()
}

// take returns the commands recorded since the last take.
func (h *sent) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.cmds
	h.cmds = nil
	return out
}

func (h *sent) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *sent) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.record(cmd)
		return next(ctx, cmd)
	}
}

func (h *sent) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.record(c)
		}
		return next(ctx, cmds)
	}
}

// ownServer starts a redis-server for one test: these tests flush
// libraries and change the default user's rights.
func ownServer(t *testing.T) *redistest.Server {
	t.Helper()
	redistest.Shared(t) // skipped with -short, as every test needing Redis
	srv, err := redistest.NewServer(redistest.ServerOptions{Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// recordedClient is a blackboard client on srv as user (""; the default
// user) whose commands h records.
func recordedClient(t *testing.T, srv *redistest.Server, user, password string) (*blackboard.Client, *sent) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: password})
	t.Cleanup(func() { _ = rdb.Close() })
	h := &sent{}
	rdb.AddHook(h)
	c, err := blackboard.New(t.Context(), rdb, blackboard.Options{Instance: "fn"})
	if err != nil {
		t.Fatal(err)
	}
	return c, h
}

// scriptCalls are the script calls among cmds.
func scriptCalls(cmds []string) []string {
	var out []string
	for _, c := range cmds {
		if c == "fcall" || c == "evalsha" {
			out = append(out, c)
		}
	}
	return out
}

// postGoalAndBeat makes a script call alone (create_artefact) and one in
// a pipeline (beat), and checks that both took effect.
func postGoalAndBeat(t *testing.T, c *blackboard.Client) {
	t.Helper()
	g := create(t, c, goal())
	if _, err := c.GetArtefact(t.Context(), g.ID); err != nil {
		t.Fatalf("the goal written by the script: %v", err)
	}
	if _, err := c.Heartbeat(t.Context(), blackboard.HeartbeatParams{Agent: "coder", Consumer: "cub-1", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
}

func libraries(t *testing.T, rdb *redis.Client) []string {
	t.Helper()
	libs, err := rdb.FunctionList(t.Context(), redis.FunctionListQuery{}).Result()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range libs {
		names = append(names, l.Name)
	}
	return names
}

func TestScriptsRunAsFunctionsForTheDefaultUser(t *testing.T) {
	t.Parallel()
	srv := ownServer(t)
	c, h := recordedClient(t, srv, "", "pw")
	if !slices.Contains(h.take(), "function load") {
		t.Fatal("the client did not load its library")
	}
	if got := libraries(t, srv.Raw()); !slices.Equal(got, []string{blackboard.LibraryName(c)}) {
		t.Fatalf("libraries %v, want only %s", got, blackboard.LibraryName(c))
	}
	postGoalAndBeat(t, c)
	if got := scriptCalls(h.take()); !slices.Equal(got, []string{"fcall", "fcall"}) {
		t.Fatalf("script calls %v, want two FCALLs", got)
	}
	// A second client (another daemon of the same version) finds the
	// library loaded and uses it.
	c2, _ := recordedClient(t, srv, "", "pw")
	if !blackboard.UsesFunctions(c2) || blackboard.LibraryName(c2) != blackboard.LibraryName(c) {
		t.Fatal("a second client does not use the loaded library")
	}
}

func TestFunctionFlushReloadsTheLibrary(t *testing.T) {
	t.Parallel()
	srv := ownServer(t)
	c, h := recordedClient(t, srv, "", "pw")
	raw := srv.Raw()
	if err := raw.FunctionFlush(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	h.take()
	postGoalAndBeat(t, c)
	cmds := h.take()
	if !slices.Contains(cmds, "function load") || slices.Contains(cmds, "evalsha") {
		t.Fatalf("after FUNCTION FLUSH the client sent %v: want the library loaded again and FCALLs", cmds)
	}
	if got := libraries(t, raw); !slices.Equal(got, []string{blackboard.LibraryName(c)}) {
		t.Fatalf("libraries %v after the reload, want %s", got, blackboard.LibraryName(c))
	}
}

// A default user that may not load functions runs the scripts by
// EVALSHA, from the start and when the library it used is lost.
func TestFunctionsFallBackToScripts(t *testing.T) {
	t.Parallel()
	t.Run("no right to load at the start", func(t *testing.T) {
		t.Parallel()
		srv := ownServer(t)
		if err := srv.Raw().Do(t.Context(), "ACL", "SETUSER", "default", "-function|load").Err(); err != nil {
			t.Fatal(err)
		}
		c, h := recordedClient(t, srv, "", "pw")
		if blackboard.UsesFunctions(c) {
			t.Fatal("the client uses functions it could not load")
		}
		postGoalAndBeat(t, c)
		if got := scriptCalls(h.take()); !slices.Equal(got, []string{"evalsha", "evalsha"}) {
			t.Fatalf("script calls %v, want two EVALSHAs", got)
		}
	})
	t.Run("library lost and not loadable again", func(t *testing.T) {
		t.Parallel()
		srv := ownServer(t)
		c, h := recordedClient(t, srv, "", "pw")
		raw := srv.Raw()
		if err := raw.FunctionFlush(t.Context()).Err(); err != nil {
			t.Fatal(err)
		}
		if err := raw.Do(t.Context(), "ACL", "SETUSER", "default", "-function|load").Err(); err != nil {
			t.Fatal(err)
		}
		h.take()
		postGoalAndBeat(t, c) // fails the test if a call fails
		cmds := h.take()
		if got := scriptCalls(cmds); len(got) < 2 || got[0] != "fcall" || got[len(got)-1] != "evalsha" {
			t.Fatalf("script calls %v: want the FCALL that found nothing, then EVALSHAs", got)
		}
		if blackboard.UsesFunctions(c) {
			t.Fatal("the client still uses functions")
		}
	})
	t.Run("a named ACL user never tries", func(t *testing.T) {
		t.Parallel()
		srv := ownServer(t)
		if err := srv.Raw().Do(t.Context(), "ACL", "SETUSER", "sett-fn-cub-coder", "on", ">cubpw", "~*", "&*", "+@all").Err(); err != nil {
			t.Fatal(err)
		}
		c, h := recordedClient(t, srv, "sett-fn-cub-coder", "cubpw")
		postGoalAndBeat(t, c)
		cmds := h.take()
		if slices.Contains(cmds, "function load") || slices.Contains(cmds, "fcall") {
			t.Fatalf("a named user sent %v: want scripts only", cmds)
		}
		if got := libraries(t, srv.Raw()); len(got) != 0 {
			t.Fatalf("libraries %v loaded by a named user", got)
		}
	})
}

// On a Redis Cluster the library is loaded on every master, and loaded
// again on every master after it was lost.
func TestFunctionsOnACluster(t *testing.T) {
	t.Parallel()
	redistest.Shared(t)
	tp, err := redistest.StartCluster(3, "cluster-pw", redistest.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Stop)
	rdb := tp.Client(0)
	t.Cleanup(func() { _ = rdb.Close() })
	c, err := blackboard.New(t.Context(), rdb, blackboard.Options{Instance: "fn", HashTag: true})
	if err != nil {
		t.Fatal(err)
	}
	onEveryMaster := func(when string) {
		t.Helper()
		for _, s := range tp.Servers[:3] {
			if got := libraries(t, s.Raw()); !slices.Equal(got, []string{blackboard.LibraryName(c)}) {
				t.Fatalf("%s: master %s has libraries %v, want %s", when, s.Addr, got, blackboard.LibraryName(c))
			}
		}
	}
	onEveryMaster("at the start")
	postGoalAndBeat(t, c)
	for _, s := range tp.Servers[:3] {
		if err := s.Raw().FunctionFlush(t.Context()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	postGoalAndBeat(t, c)
	if !blackboard.UsesFunctions(c) {
		t.Fatal("the client fell back to scripts on a cluster that takes the library")
	}
	onEveryMaster("after FUNCTION FLUSH")
}
