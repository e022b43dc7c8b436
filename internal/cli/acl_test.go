package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/redistest"
)

// TestACLPrintLinesWork runs the lines `sett acl print` writes on a real
// Redis and logs in as each printed user: the lines are valid, the
// passwords match, and a cub's user is refused FLUSHALL.
func TestACLPrintLinesWork(t *testing.T) {
	e := newTestEnv(t)
	cfg := "version: \"1.0\"\nagents:\n  writer: {command: [sett-writer]}\n"
	if err := os.WriteFile(filepath.Join(e.app.Dir, "sett.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := e.mustRun(t, "acl", "print")
	ctx := context.Background()
	raw := redistest.Raw(t)
	srv := redistest.Shared(t)
	inst := e.bb.Instance()
	var users int
	var comment string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "# ") {
			comment = line
			continue
		}
		if !strings.HasPrefix(line, "ACL SETUSER ") {
			continue
		}
		words := strings.Fields(line)
		args := make([]any, len(words))
		for i, w := range words {
			args[i] = w
		}
		if err := raw.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%s: %v", words[2], err)
		}
		name := words[2]
		t.Cleanup(func() { _ = raw.Do(context.Background(), "ACL", "DELUSER", name).Err() })
		pw := strings.TrimPrefix(words[5], ">")
		if !strings.Contains(comment, "SETT_REDIS_USERNAME="+name+" SETT_REDIS_PASSWORD="+pw) {
			t.Errorf("comment %q does not hand over user %s and its password", comment, name)
		}
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: name, Password: pw})
		if err := c.Ping(ctx).Err(); err != nil {
			t.Errorf("%s cannot log in: %v", name, err)
		}
		if name == "sett-"+inst+"-cub-writer" {
			if err := c.FlushAll(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
				t.Errorf("cub user FLUSHALL: %v, want NOPERM", err)
			}
		}
		_ = c.Close()
		users++
	}
	if users != 4 {
		t.Fatalf("%d users printed, want orchestrator, cub-writer, human and reader:\n%s", users, out)
	}
}
