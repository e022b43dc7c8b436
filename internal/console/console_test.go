package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/console"
	"github.com/settdev/sett/internal/redistest"
)

const token = "0123456789abcdef0123"

// xss is a goal whose text would run script if it were not escaped.
const xss = `Deploy <script>window.pwned=1</script><img src=x onerror="window.pwned=2"> now`

type fixture struct {
	t   *testing.T
	bb  *blackboard.Client
	h   http.Handler
	ck  *http.Cookie
	srv string // base path
}

func newFixture(t *testing.T, o console.Options) *fixture {
	t.Helper()
	bb := redistest.Client(t)
	o.Client, o.Token = bb, token
	if o.Actor == "" {
		o.Actor = "tester"
	}
	h, err := console.New(o)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, bb: bb, h: h, srv: o.BasePath}
	rec := f.do(httptest.NewRequest("GET", o.BasePath+"/?token="+token, nil))
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("token in the query: %d, want 303 to the clean URL", rec.Code)
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == "sett_console" {
			f.ck = c
		}
	}
	if f.ck == nil {
		t.Fatal("no session cookie set")
	}
	return f
}

func (f *fixture) do(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, r)
	return rec
}

// get fetches a page with the session cookie and returns its body.
func (f *fixture) get(path string) (int, string) {
	r := httptest.NewRequest("GET", f.srv+path, nil)
	r.AddCookie(f.ck)
	rec := f.do(r)
	return rec.Code, rec.Body.String()
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf reads the CSRF token from a page's form.
func (f *fixture) csrf(path string) string {
	f.t.Helper()
	_, body := f.get(path)
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		f.t.Fatalf("no CSRF field on %s", path)
	}
	return m[1]
}

// post sends a form with the session cookie and the given headers.
func (f *fixture) post(path string, form url.Values, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", f.srv+path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.AddCookie(f.ck)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	return f.do(r)
}

func postGoal(t *testing.T, bb *blackboard.Client, text string) string {
	t.Helper()
	g := blackboard.NewGoal(text, 0, "user", nil)
	if err := bb.CreateArtefact(context.Background(), g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	return g.ID
}

func TestEveryRequestNeedsTheToken(t *testing.T) {
	f := newFixture(t, console.Options{})
	tests := []struct {
		name, method, path string
		hdr                map[string]string
		want               int
	}{
		{"list without token", "GET", "/", nil, 401},
		{"asset without token", "GET", "/static/console.js", nil, 401},
		{"events without token", "GET", "/events", nil, 401},
		{"approvals without token", "GET", "/approvals", nil, 401},
		{"write without token", "POST", "/control/pause", nil, 401},
		{"wrong token in query", "GET", "/?token=nope", nil, 401},
		{"wrong bearer", "GET", "/", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"forged cookie", "GET", "/", map[string]string{"Cookie": "sett_console=abc.def"}, 401},
		{"right bearer", "GET", "/", map[string]string{"Authorization": "Bearer " + token}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.path, nil)
			for k, v := range tc.hdr {
				r.Header.Set(k, v)
			}
			if rec := f.do(r); rec.Code != tc.want {
				t.Errorf("%s %s: %d, want %d (%s)", tc.method, tc.path, rec.Code, tc.want, rec.Body.String())
			}
		})
	}
	t.Run("query token sets a strict http-only cookie and leaves the URL", func(t *testing.T) {
		rec := f.do(httptest.NewRequest("GET", "/approvals?token="+token, nil))
		if loc := rec.Header().Get("Location"); rec.Code != 303 || loc != "/approvals" {
			t.Errorf("%d to %q, want 303 to /approvals", rec.Code, loc)
		}
		c := rec.Result().Cookies()[0]
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || strings.Contains(c.Value, token) {
			t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, path /, not the token itself", c)
		}
		if code, _ := f.get("/"); code != 200 {
			t.Errorf("with the cookie: %d, want 200", code)
		}
	})
}

func TestCrossSiteWritesAreRefused(t *testing.T) {
	f := newFixture(t, console.Options{})
	ctx := context.Background()
	good := f.csrf("/control")
	other := newFixture(t, console.Options{}).csrf("/control")
	tests := []struct {
		name string
		csrf string
		hdr  map[string]string
	}{
		{"cross-site fetch metadata", good, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"same-site but other origin", good, map[string]string{"Sec-Fetch-Site": "same-site"}},
		{"foreign origin header", good, map[string]string{"Origin": "http://evil.example"}},
		{"no CSRF token", "", map[string]string{"Sec-Fetch-Site": "same-origin"}},
		{"another session's CSRF token", other, map[string]string{"Sec-Fetch-Site": "same-origin"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.post("/control/pause", url.Values{"csrf": {tc.csrf}, "reason": {"x"}}, tc.hdr)
			if rec.Code != http.StatusForbidden {
				t.Errorf("%d, want 403 (%s)", rec.Code, rec.Body.String())
			}
			if ps, err := f.bb.GetPauseState(ctx); err != nil || ps.Paused {
				t.Fatalf("paused=%v err=%v after a refused request", ps.Paused, err)
			}
		})
	}
	rec := f.post("/control/pause", url.Values{"csrf": {good}, "reason": {"maintenance"}},
		map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://example.com"})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("same-origin pause: %d (%s)", rec.Code, rec.Body.String())
	}
	ps, err := f.bb.GetPauseState(ctx)
	if err != nil || !ps.Paused || ps.By != "tester" || ps.Reason != "maintenance" {
		t.Fatalf("pause state %+v err %v, want paused by tester for maintenance", ps, err)
	}
}

func TestReadOnlyServesNoAction(t *testing.T) {
	f := newFixture(t, console.Options{ReadOnly: true})
	wf := postGoal(t, f.bb, "a goal")
	for _, p := range []string{"/", "/approvals", "/control", "/w/" + wf} {
		code, body := f.get(p)
		if code != 200 {
			t.Fatalf("%s: %d", p, code)
		}
		if strings.Contains(body, `method="post"`) || strings.Contains(body, `name="csrf"`) {
			t.Errorf("%s offers an action in read-only mode", p)
		}
	}
	for _, p := range []string{"/control/pause", "/approvals/decide", "/w/" + wf + "/cancel"} {
		r := httptest.NewRequest("POST", p, strings.NewReader("reason=x"))
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if rec := f.do(r); rec.Code != http.StatusForbidden {
			t.Errorf("POST %s read-only: %d, want 403", p, rec.Code)
		}
	}
	if ps, _ := f.bb.GetPauseState(context.Background()); ps.Paused {
		t.Error("a read-only console paused the instance")
	}
}

func TestPayloadsAreEscaped(t *testing.T) {
	f := newFixture(t, console.Options{})
	wf := postGoal(t, f.bb, xss)
	for _, p := range []string{"/", "/rows", "/w/" + wf, "/a/" + wf, "/?q=deploy"} {
		code, body := f.get(p)
		if code != 200 {
			t.Fatalf("%s: %d", p, code)
		}
		if strings.Contains(body, "<script>window") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s renders the payload as markup:\n%s", p, body)
		}
		if !strings.Contains(body, "&lt;script&gt;") {
			t.Errorf("%s does not show the payload as text", p)
		}
	}
}

func TestListPagesFiltersAndSearches(t *testing.T) {
	f := newFixture(t, console.Options{})
	var ids []string
	for i := range 120 {
		text := "routine chore"
		if i%40 == 7 {
			text = "Rotate the TLS certificates"
		}
		ids = append(ids, postGoal(t, f.bb, text))
		if i%40 == 7 {
			// The TLS workflows hold a Plan by the planner.
			p := &blackboard.Artefact{ID: blackboard.NewID(), Version: 1, WorkflowID: ids[i], Type: "Plan",
				StructuralType: blackboard.StructuralStandard, Payload: "plan", ProducedByAgent: "planner",
				ProducedByRole: "planner", SourceArtefacts: []string{ids[i]}, Depth: 1}
			p.LogicalID = p.ID
			if err := f.bb.CreateArtefact(context.Background(), p, blackboard.WriteAuth{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	rowRE := regexp.MustCompile(`<tr id="wf-([0-9a-f-]+)"`)
	nextRE := regexp.MustCompile(`id="next" href="[^"]*cursor=([0-9%A-Fa-f:]+)"`)
	seen := map[string]bool{}
	path, pages := "/", 0
	for path != "" {
		_, body := f.get(path)
		for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
			if seen[m[1]] {
				t.Fatalf("workflow %s on two pages", m[1])
			}
			seen[m[1]] = true
		}
		pages++
		path = ""
		if m := nextRE.FindStringSubmatch(body); m != nil {
			c, _ := url.QueryUnescape(m[1])
			path = "/?cursor=" + url.QueryEscape(c)
		}
	}
	if len(seen) != 120 || pages != 3 {
		t.Fatalf("%d workflows over %d pages, want 120 over 3", len(seen), pages)
	}
	_, body := f.get("/?q=tls+CERT")
	if n := len(rowRE.FindAllString(body, -1)); n != 3 {
		t.Errorf("search for the goal text: %d rows, want 3", n)
	}
	_, body = f.get("/?q=" + ids[5][:8])
	if !strings.Contains(body, `id="wf-`+ids[5]+`"`) {
		t.Errorf("search by id prefix %s does not find it", ids[5][:8])
	}
	for q, want := range map[string]int{"agent=planner": 3, "type=Plan": 3, "type=Plan&agent=planner&q=tls": 3,
		"type=Plan&agent=reviewer": 0, "type=GoalDefined": 50} {
		_, body = f.get("/?" + q)
		if n := len(rowRE.FindAllString(body, -1)); n != want {
			t.Errorf("%s: %d rows, want %d", q, n, want)
		}
	}
	_, body = f.get("/?type=GoalDefined")
	if !strings.Contains(body, "type=GoalDefined&amp;cursor=") {
		t.Errorf("the next page's link drops the type filter")
	}
	_, body = f.get("/?status=completed")
	if n := len(rowRE.FindAllString(body, -1)); n != 0 {
		t.Errorf("status=completed: %d rows, want none", n)
	}
	if code, _ := f.get("/?status=bogus"); code != http.StatusBadRequest {
		t.Errorf("bad status filter: %d, want 400", code)
	}
}

func TestBasePathPrefixesEveryLink(t *testing.T) {
	f := newFixture(t, console.Options{BasePath: "/ops/sett"})
	wf := postGoal(t, f.bb, "a goal")
	for _, p := range []string{"/", "/w/" + wf, "/control", "/approvals"} {
		code, body := f.get(p)
		if code != 200 {
			t.Fatalf("%s: %d", p, code)
		}
		for _, m := range regexp.MustCompile(`(?:href|src|action)="([^"]*)"`).FindAllStringSubmatch(body, -1) {
			if !strings.HasPrefix(m[1], "/ops/sett/") && !strings.HasPrefix(m[1], "#") {
				t.Errorf("%s links to %q outside the base path", p, m[1])
			}
		}
	}
	r := httptest.NewRequest("GET", "/static/console.js", nil)
	r.AddCookie(f.ck)
	if rec := f.do(r); rec.Code != http.StatusNotFound {
		t.Errorf("a path outside the base path: %d, want 404", rec.Code)
	}
	code, body := f.get("/static/console.js")
	if code != 200 || !strings.Contains(body, "EventSource") {
		t.Errorf("asset under the base path: %d", code)
	}
}

func TestEventsPushNewWorkflows(t *testing.T) {
	f := newFixture(t, console.Options{})
	srv := httptest.NewServer(f.h)
	defer srv.Close()
	// The deadline turns a missing push into a failure, not a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	// The stream starts at the moment of connecting: the retry line is
	// written after the start position is read.
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	wf := postGoal(t, f.bb, "pushed")
	var got strings.Builder
	b := make([]byte, 4096)
	for !strings.Contains(got.String(), `"workflow":"`+wf+`"`) {
		n, err := resp.Body.Read(b)
		got.Write(b[:n])
		if err == io.EOF || err != nil {
			t.Fatalf("stream ended before the new workflow showed: %v\n%s", err, got.String())
		}
	}
	if !strings.Contains(got.String(), `"type":"workflow_started"`) {
		t.Errorf("no workflow_started pushed:\n%s", got.String())
	}
}

// TestAPageThatMissedAChangeRedrawsAtOnce: a change between the page's
// read (its data-since) and its event stream's start makes the stream
// open with a resync; without one, it opens quiet.
func TestAPageThatMissedAChangeRedrawsAtOnce(t *testing.T) {
	f := newFixture(t, console.Options{})
	srv := httptest.NewServer(f.h)
	defer srv.Close()
	sinceRE := regexp.MustCompile(`data-since="([0-9]+-[0-9]+)"`)
	first := func(since string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events?since="+since, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b := make([]byte, 256)
		n, _ := resp.Body.Read(b)
		return string(b[:n])
	}
	postGoal(t, f.bb, "before the page")
	_, body := f.get("/")
	m := sinceRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the page carries no data-since")
	}
	if got := first(m[1]); strings.Contains(got, "resync") {
		t.Errorf("nothing changed, yet the stream opened with %q", got)
	}
	postGoal(t, f.bb, "after the page was read")
	if got := first(m[1]); !strings.Contains(got, `"type":"resync"`) {
		t.Errorf("a change was missed, yet the stream opened with %q", got)
	}
}
