package connect

import (
	"strings"
	"testing"
)

func TestComposeStackFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     string
		wantOK  bool
		want    ComposeStack
		wantErr string
	}{
		{"written by sett init --compose",
			"# comment\nCOMPOSE_PROJECT_NAME=sett-x-abc\nSETT_INSTANCE=compose\nSETT_REDIS_PASSWORD=pw\nSETT_REDIS_PORT=6381\nSETT_WORKSPACE_DIR=/w\n",
			true, ComposeStack{Dir: "/d/repo", Project: "sett-x-abc", Instance: "compose", Password: "pw", Port: 6381, Workspace: "/w"}, ""},
		{"quotes, export and defaults",
			"export SETT_REDIS_PASSWORD='p w'\n\n",
			true, ComposeStack{Dir: "/d/repo", Project: "repo", Instance: "compose", Password: "p w", Port: 6379}, ""},
		{"no password: not a Sett stack", "COMPOSE_PROJECT_NAME=other\n", false, ComposeStack{}, ""},
		{"a bad port says how to fix it", "SETT_REDIS_PASSWORD=pw\nSETT_REDIS_PORT=redis\n", false, ComposeStack{}, "SETT_REDIS_PORT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok, err := composeStackFromEnv("/d/repo", ParseDotEnv([]byte(tt.env)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || ok != tt.wantOK {
				t.Fatalf("ok = %v, err = %v", ok, err)
			}
			if ok && *s != tt.want {
				t.Errorf("got %+v, want %+v", *s, tt.want)
			}
		})
	}
}

func TestComposeStackRedisURLAndWhere(t *testing.T) {
	s := ComposeStack{Dir: "/d", Project: "p", Password: "a/b@c", Port: 6390}
	if got, want := s.RedisURL(), "redis://:a%2Fb%40c@127.0.0.1:6390/0"; got != want {
		t.Errorf("RedisURL = %q, want %q", got, want)
	}
	if w := s.Where(); strings.Contains(w, "a/b@c") || !strings.Contains(w, "127.0.0.1:6390") {
		t.Errorf("Where = %q: shows the password or lacks the address", w)
	}
}
