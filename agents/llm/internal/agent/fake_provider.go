package agent

import (
	"net/http"
	"net/http/httptest"

	"github.com/settdev/sett/internal/fakellm"
)

// fakeBaseURL is where the in-process fake model answers; requests to it
// never leave the process (fakeClient serves them).
const fakeBaseURL = "http://sett-fake-llm.invalid/v1"

// fakeClient is an HTTP client whose every request is answered in this
// process by Sett's fake model (the demo script that sett-fake-llm serves
// by default): LLM_PROVIDER=fake needs no server and no network.
func fakeClient() *http.Client {
	return &http.Client{Transport: handlerTransport{h: fakellm.New(fakellm.DemoScript())}}
}

// handlerTransport serves requests with an http.Handler in process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
