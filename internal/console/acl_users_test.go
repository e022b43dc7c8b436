package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/settdev/sett/internal/acl"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/console"
	"github.com/settdev/sett/internal/redistest"
)

// aclClient creates the instance's ACL user of role on the shared server
// and returns a blackboard client connected as it.
func aclClient(t *testing.T, inst string, role acl.Role) *blackboard.Client {
	t.Helper()
	ctx := context.Background()
	raw := redistest.Raw(t)
	for _, u := range acl.Users(inst, false, nil) {
		if u.Role != role {
			continue
		}
		pw, err := acl.NewPassword()
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.Do(ctx, append([]any{"ACL"}, u.Args(pw)...)...).Err(); err != nil {
			t.Fatal(err)
		}
		name := u.Name
		t.Cleanup(func() { _ = raw.Do(context.Background(), "ACL", "DELUSER", name).Err() })
		bb, err := blackboard.DialConn(ctx, blackboard.Conn{URL: redistest.Shared(t).URL(), Username: u.Name, Password: pw},
			blackboard.Options{Instance: inst})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = bb.Close() })
		return bb
	}
	t.Fatalf("no %s user", role)
	return nil
}

// TestConsoleReadsAsReaderAndWritesAsHuman serves the console as `sett ui`
// does with ACL users: pages through the read-only user, actions through
// the people's user. Without the writer, the same action is refused by
// Redis: the reader cannot write.
func TestConsoleReadsAsReaderAndWritesAsHuman(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := redistest.Client(t)
	inst := admin.Instance()
	reader, human := aclClient(t, inst, acl.RoleReader), aclClient(t, inst, acl.RoleHuman)
	wf := postGoal(t, admin, "Add a /health endpoint")

	for _, tc := range []struct {
		name   string
		writer *blackboard.Client
		paused bool
	}{{"reader only", nil, false}, {"reader and human", human, true}} {
		h, err := console.New(console.Options{Client: reader, Writer: tc.writer, Token: token, Actor: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		f := &fixture{t: t, bb: admin, h: h}
		rec := f.do(httptest.NewRequest("GET", "/?token="+token, nil))
		for _, c := range rec.Result().Cookies() {
			if c.Name == "sett_console" {
				f.ck = c
			}
		}
		if f.ck == nil {
			t.Fatalf("%s: no session cookie", tc.name)
		}
		if code, _ := f.get("/w/" + wf); code != http.StatusOK {
			t.Fatalf("%s: workflow page as the reader: %d", tc.name, code)
		}
		rec = f.post("/control/pause", url.Values{"csrf": {f.csrf("/control")}, "reason": {"lunch"}},
			map[string]string{"Sec-Fetch-Site": "same-origin"})
		ps, err := admin.GetPauseState(ctx)
		if err != nil || ps.Paused != tc.paused {
			t.Fatalf("%s: pause answered %d (%s); paused=%v err=%v, want paused=%v", tc.name, rec.Code, rec.Body.String(), ps.Paused, err, tc.paused)
		}
	}
	ps, _ := admin.GetPauseState(ctx)
	if ps.By != "alice" || ps.Reason != "lunch" {
		t.Errorf("pause state %+v, want by alice for lunch", ps)
	}
}
