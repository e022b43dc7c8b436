package tiedchild

import (
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestChildOutlivesEndedThreads: goroutines that lock their thread and
// return (each ending its thread, as the cub's tool spawners do when they
// retire) never take a tied child with them. Started the plain way with a
// parent-death signal, a child forked on one of those threads would be
// killed; here it must still be running, and then exit on its own.
func TestChildOutlivesEndedThreads(t *testing.T) {
	cmd := exec.Command("sleep", "1")
	exited, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // returning while locked ends the thread
		}()
	}
	wg.Wait()
	select {
	case <-exited:
		t.Fatalf("the child ended early: %v", cmd.ProcessState)
	default:
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the child did not exit")
	}
	if !cmd.ProcessState.Success() {
		t.Fatalf("the child ended with %v, want a clean exit", cmd.ProcessState)
	}
}
