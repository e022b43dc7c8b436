package tool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/readchannel"
)

// TestFetchOmittedPutsBackLongArtefacts runs a real read channel (as the
// cub serves it): the long plan left out of the input comes back whole,
// the review stays omitted (its memory stands in), and a plan the
// channel does not have keeps a note and reports the error.
func TestFetchOmittedPutsBackLongArtefacts(t *testing.T) {
	dir, err := os.MkdirTemp("", "rc") // short: a socket path has ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	plan := "# Plan\n" + strings.Repeat("a step\n", 2000)
	store := map[string]*readchannel.Artefact{"plan": {WorkflowID: "wf", Payload: plan}, "review": {WorkflowID: "wf", Payload: "{}"}}
	srv, err := readchannel.Listen(context.Background(), filepath.Join(dir, "read.sock"), "wf",
		func(_ context.Context, id string) (*readchannel.Artefact, error) {
			if a, ok := store[id]; ok {
				return a, nil
			}
			return nil, readchannel.ErrNotFound
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	in := Input{ContextChain: []Artefact{
		{ID: "plan", StructuralType: "Standard", PayloadOmitted: true, PayloadBytes: len(plan), Sections: []string{"Plan"}},
		{ID: "review", StructuralType: "Review", PayloadOmitted: true, PayloadBytes: 2},
		{ID: "gone", StructuralType: "Standard", PayloadOmitted: true, PayloadBytes: 9000, Sections: []string{"Report"}},
	}}
	err = FetchOmitted(&in, srv.Path)
	if got := in.ContextChain[0]; got.Payload != plan || got.PayloadOmitted {
		t.Errorf("the plan: %d bytes, omitted %v; want its whole payload back", len(got.Payload), got.PayloadOmitted)
	}
	if got := in.ContextChain[1]; !got.PayloadOmitted || got.Payload != "" {
		t.Errorf("the review: %+v; want it left to its memory", got)
	}
	if got := in.ContextChain[2]; !strings.Contains(got.Payload, "9000 bytes left out") || !strings.Contains(got.Payload, "Report") {
		t.Errorf("the missing artefact's note: %q", got.Payload)
	}
	if err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("FetchOmitted error %v, want one naming the artefact it could not fetch", err)
	}
	// Outside a cub there is no socket: every omitted artefact keeps a
	// note, and the error says why.
	in = Input{ContextChain: []Artefact{{ID: "plan", StructuralType: "Standard", PayloadOmitted: true, PayloadBytes: 10}}}
	if err := FetchOmitted(&in, ""); err == nil || !strings.Contains(err.Error(), readchannel.EnvSocket) {
		t.Errorf("without a socket: %v, want an error naming %s", err, readchannel.EnvSocket)
	}
}
