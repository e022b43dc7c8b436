package orchestratord

import (
	"os"
	"strings"
	"testing"
)

func TestOrchestratorIdentityIsUniqueAmongLiveHoldersAndReusedAfterRelease(t *testing.T) {
	dir := t.TempDir()
	host, _ := os.Hostname()
	first, releaseFirst := orchestratorIdentity(dir, "demo")
	second, releaseSecond := orchestratorIdentity(dir, "demo")
	defer releaseSecond()
	if first != host+"/0" || second != host+"/1" {
		t.Fatalf("identities %q, %q; want %s/0 and %s/1", first, second, host, host)
	}
	other, releaseOther := orchestratorIdentity(dir, "other/instance")
	defer releaseOther()
	if other != host+"/0" {
		t.Errorf("another instance got %q, want its own slot 0", other)
	}
	// Once the first holder is gone, its slot — and so its identity and
	// its lease — passes to the next process to start.
	releaseFirst()
	again, releaseAgain := orchestratorIdentity(dir, "demo")
	defer releaseAgain()
	if again != first {
		t.Errorf("after release got %q, want %q", again, first)
	}
	if strings.Contains(other, "#") {
		t.Errorf("identity %q contains the boot separator", other)
	}
}

func TestOrchestratorIdentityWithoutALockDirIsEmpty(t *testing.T) {
	if id, release := orchestratorIdentity("/nonexistent/sett-test", "demo"); id != "" {
		release()
		t.Fatalf("identity %q without a lock dir, want none", id)
	}
}
