package redistest

import "testing"

func TestFreePortNeverRepeatsAPort(t *testing.T) {
	seen := map[int]bool{}
	for i := 0; i < 500; i++ {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] {
			t.Fatalf("call %d returned port %d a second time", i, port)
		}
		seen[port] = true
	}
}
