package blackboard_test

import (
	"net/url"
	"path/filepath"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// A unix:// URL reaches Redis through its Unix socket: the scripts load
// and run there as over TCP.
func TestDialUnixSocket(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	srv, err := redistest.NewServer(redistest.ServerOptions{Password: "s3cret", Dir: dir,
		Extra: []string{`unixsocket "` + sock + `"`, "unixsocketperm 700"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	u := (&url.URL{Scheme: "unix", User: url.UserPassword("", "s3cret"), Path: sock, RawQuery: "db=0"}).String()
	c, err := blackboard.Dial(t.Context(), u, blackboard.Options{Instance: "unix"})
	if err != nil {
		t.Fatalf("Dial(%s): %v", u, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	g := startWorkflow(t, c)
	got, err := c.GetArtefact(t.Context(), g.ID)
	if err != nil || got.ID != g.ID {
		t.Fatalf("GetArtefact over the socket = %v, %v; want the goal %s", got, err, g.ID)
	}
}
