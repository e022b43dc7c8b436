package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWritesAreAllKept writes from several goroutines while
// reading (go test -race checks the sharing) and finds every write.
func TestConcurrentWritesAreAllKept(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("x\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(b.String(), "x\n"); got != 800 || b.Len() != 1600 {
		t.Fatalf("kept %d writes (%d bytes), want 800 (1600 bytes)", got, b.Len())
	}
}
