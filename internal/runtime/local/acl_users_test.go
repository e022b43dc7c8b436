package local_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/instance"
)

// checkComponentsOnOwnUsers asserts that the Redis the runtime started has
// a connection from each role's own ACL user ("orchestrator",
// "cub-<agent>"), so no daemon runs on the default user.
func checkComponentsOnOwnUsers(t *testing.T, rec *instance.Record, roles ...string) {
	t.Helper()
	opts, err := redis.ParseURL(rec.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	list, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range roles {
		if want := " user=sett-" + rec.Name + "-" + role + " "; !strings.Contains(list, want) {
			t.Errorf("no connection with%s in CLIENT LIST:\n%s", want, list)
		}
	}
}
