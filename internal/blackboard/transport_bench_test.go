package blackboard_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/redistest"
)

// BenchmarkRoundTrip compares one Redis round trip (an HGET) over loopback
// TCP and over the server's Unix socket, with the CPU each side spends:
//
//	go test -run '^$' -bench RoundTrip -benchtime 20000x ./internal/blackboard/
//
// On the 2-core VM (Docker installed, so netfilter sees loopback packets)
// TCP cost about 70 µs of CPU per round trip, client and server together,
// and the socket 28: why the local runtime connects its daemons through
// the socket.
func BenchmarkRoundTrip(b *testing.B) {
	dir := b.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	srv, err := redistest.NewServer(redistest.ServerOptions{Dir: dir,
		Extra: []string{`unixsocket "` + sock + `"`, "unixsocketperm 700"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Stop)
	for _, tc := range []struct {
		name string
		opts *redis.Options
	}{
		{"tcp", &redis.Options{Addr: srv.Addr}},
		{"unix", &redis.Options{Network: "unix", Addr: sock}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			rdb := redis.NewClient(tc.opts)
			defer rdb.Close()
			ctx := b.Context()
			if err := rdb.HSet(ctx, "h", "f", "v").Err(); err != nil {
				b.Fatal(err)
			}
			server0, client0 := processCPU(b, srv.Pid()), selfCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := rdb.HGet(ctx, "h", "f").Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((selfCPU()-client0).Microseconds())/float64(b.N), "client-cpu-µs/op")
			b.ReportMetric(float64((processCPU(b, srv.Pid())-server0).Microseconds())/float64(b.N), "server-cpu-µs/op")
		})
	}
}

// selfCPU is this process's user+system time.
func selfCPU() time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// processCPU is another process's user+system time, from /proc (clock
// ticks of 10 ms: use enough iterations).
func processCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
