package blackboard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// TestPayloadsLargerThanTheBuffersRoundTrip: connections have 8 KiB
// buffers (16 KiB when pipelined); an artefact whose payload is far larger
// is written in one script call and read back whole, alone and pipelined.
func TestPayloadsLargerThanTheBuffersRoundTrip(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	var arts []*blackboard.Artefact
	for i, size := range []int{8<<10 - 1, 8 << 10, 16<<10 + 1, 1 << 20} {
		a := child(g.ID)
		var b strings.Builder
		for b.Len() < size {
			fmt.Fprintf(&b, "line %d of artefact %d\n", b.Len(), i)
		}
		a.Payload = b.String()[:size]
		create(t, c, a)
		arts = append(arts, a)
	}
	ids := make([]string, len(arts))
	for i, a := range arts {
		ids[i] = a.ID
		got, err := c.GetArtefact(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Payload != a.Payload {
			t.Errorf("artefact of %d bytes read back as %d bytes (or altered)", len(a.Payload), len(got.Payload))
		}
	}
	got, err := c.GetArtefacts(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range arts {
		if got[i] == nil || got[i].Payload != a.Payload {
			t.Errorf("pipelined read of the %d-byte artefact: payload altered", len(a.Payload))
		}
	}
}
