package main

import (
	"bytes"
	"os"
	"testing"
)

// TestChartRulesAreCurrent fails when internal/acl's users changed and the
// chart's copy of their rules was not regenerated.
func TestChartRulesAreCurrent(t *testing.T) {
	var want bytes.Buffer
	if err := write(&want); err != nil {
		t.Fatal(err)
	}
	const path = "../sett/files/acl-rules.yaml"
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("%s is stale: run `go run ./deploy/helm/aclrules > deploy/helm/sett/files/acl-rules.yaml`\ngot:\n%s\nwant:\n%s", path, got, want.Bytes())
	}
}
