package instance

import "testing"

func TestURLForPicksTheUserOfTheAccess(t *testing.T) {
	admin, human, reader := "redis://:pw@127.0.0.1:1/0", "redis://h:hp@127.0.0.1:1/0", "redis://r:rp@127.0.0.1:1/0"
	for _, tc := range []struct {
		name   string
		rec    Record
		access Access
		want   string
	}{
		{"human with ACL users", Record{RedisURL: admin, HumanRedisURL: human, ReaderRedisURL: reader}, AccessHuman, human},
		{"reader with ACL users", Record{RedisURL: admin, HumanRedisURL: human, ReaderRedisURL: reader}, AccessReader, reader},
		{"admin with ACL users", Record{RedisURL: admin, HumanRedisURL: human, ReaderRedisURL: reader}, AccessAdmin, admin},
		{"human without (external Redis, older record)", Record{RedisURL: admin}, AccessHuman, admin},
		{"reader without", Record{RedisURL: admin}, AccessReader, admin},
	} {
		if got := tc.rec.URLFor(tc.access); got != tc.want {
			t.Errorf("%s: URLFor = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := WithUser("redis://:pw@127.0.0.1:6379/0", "sett-x-human", "s3cret"); got != "redis://sett-x-human:s3cret@127.0.0.1:6379/0" {
		t.Errorf("WithUser = %q", got)
	}
}
