package bench

import (
	"bufio"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeRedis answers +OK to every complete command it receives, and after
// a command named PUSHME also pushes a message nobody asked for (like a
// pub/sub delivery).
func fakeRedis(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				var p respParser
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					for _, cmd := range p.feed(buf[:n]) {
						reply := "+OK\r\n"
						if strings.EqualFold(cmd[0], "PUSHME") {
							reply += ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"
						}
						if _, err := c.Write([]byte(reply)); err != nil {
							return
						}
					}
				}
			}(c)
		}
	}()
	return ln.Addr().String()
}

func resp(args ...string) string {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	return b.String()
}

func TestRoundTripProxyCountsTurnsCommandsAndShapes(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	p, err := NewRoundTripProxy("test", fakeRedis(t), map[string]string{sha: "create_artefact"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// expect reads n replies ("+OK" lines, and a pushed message's lines).
	expect := func(lines int) {
		t.Helper()
		for i := 0; i < lines; i++ {
			if _, err := r.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
	}
	// 1: one command, split over two writes: still one round trip.
	ping := resp("PING")
	c.Write([]byte(ping[:5]))
	c.Write([]byte(ping[5:]))
	expect(1)
	// 2: a pipeline of three commands in one write.
	c.Write([]byte(resp("HGETALL", "a") + resp("HGETALL", "b") + resp("TIME")))
	expect(3)
	// 3: a script call by digest, with a payload too long to keep.
	c.Write([]byte(resp("EVALSHA", sha, "1", "key", strings.Repeat("x", 1000))))
	expect(1)
	// 4: a request whose answer is followed by an unrequested push; the
	// push is not a round trip.
	c.Write([]byte(resp("PUSHME")))
	expect(1 + 7)
	// 5: a blocking stream read.
	c.Write([]byte(resp("XREADGROUP", "GROUP", "g", "c", "BLOCK", "1000", "STREAMS", "s", ">")))
	expect(1)
	// The proxy records a request's shape before it forwards the answer,
	// so everything is counted once the client has read it.
	got := p.Snapshot()
	if got.RoundTrips != 5 || got.Commands != 7 || got.Connections != 1 {
		t.Errorf("round trips %d, commands %d, connections %d; want 5, 7, 1", got.RoundTrips, got.Commands, got.Connections)
	}
	want := map[string]int64{"ping": 1, "hgetall×2+time": 1, "evalsha:create_artefact": 1, "pushme": 1, "xreadgroup(block)": 1}
	if !reflect.DeepEqual(got.Shapes, want) {
		t.Errorf("shapes %v, want %v", got.Shapes, want)
	}
	d := got.Sub(ProxyCounts{RoundTrips: 2, Commands: 3, Shapes: map[string]int64{"ping": 1}})
	if d.RoundTrips != 3 || d.Commands != 4 || d.Shapes["ping"] != 0 || d.Shapes["pushme"] != 1 {
		t.Errorf("Sub = %+v", d)
	}
}

func TestCommandLabelNamesScripts(t *testing.T) {
	scripts := map[string]string{"da39a3ee5e6b4b0d3255bfef95601890afd80709": "beat"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"EVALSHA", "da39a3ee5e6b4b0d3255bfef95601890afd80709", "0"}, "evalsha:beat"},
		{[]string{"EVALSHA", "0123456789abcdef0123", "0"}, "evalsha:01234567"},
		{[]string{"FCALL", "sett_0123456789abcdef_submit_bid", "1", "k"}, "fcall:submit_bid"},
		{[]string{"FCALL", "other_function", "0"}, "fcall:other_function"},
		{[]string{"FUNCTION", "LOAD", "#!lua name=x"}, "function load"},
	} {
		if got := commandLabel(tc.args, scripts); got != tc.want {
			t.Errorf("commandLabel(%v) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestShapeOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels []string
		want   string
	}{
		{"single", []string{"evalsha:submit_bid"}, "evalsha:submit_bid"},
		{"run collapsed", []string{"hgetall", "hgetall", "hgetall", "hgetall", "time", "hgetall"}, "hgetall×4+time+hgetall"},
		{"pair", []string{"xack", "xdel"}, "xack+xdel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shapeOf(tc.labels); got != tc.want {
				t.Fatalf("shapeOf(%v) = %q, want %q", tc.labels, got, tc.want)
			}
		})
	}
}

func TestParseRedisStats(t *testing.T) {
	s := parseRedisStats("# Stats\r\ntotal_commands_processed:120\r\ntotal_reads_processed:40\r\n# Commandstats\r\n" +
		"cmdstat_evalsha:calls=7,usec=100,usec_per_call=14.29,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_client|setinfo:calls=2,usec=1,usec_per_call=0.50,rejected_calls=0,failed_calls=0\r\n" +
		"# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:0.000125\r\nused_cpu_sys_children:9.000000\r\n")
	if s.Commands != 120 || s.Reads != 40 || s.Calls["evalsha"] != 7 || s.Calls["client|setinfo"] != 2 ||
		s.Usec["evalsha"] != 100 || s.CPU != 1250125 {
		t.Fatalf("parsed %+v", s)
	}
}

func TestBuildFloorPrograms(t *testing.T) {
	progs, unknown := buildFloorPrograms(map[string]float64{"hset": 2.5, "evalsha": 3, "xadd": 1, "mystery": 1}, 4, 2)
	if len(unknown) != 1 || unknown[0] != "mystery" {
		t.Fatalf("unknown = %v, want [mystery]", unknown)
	}
	counts := map[string]int{}
	for _, p := range progs {
		if len(p) != 2 {
			t.Fatalf("a claim has %d round trips, want 2", len(p))
		}
		for _, rt := range p {
			for _, cmd := range rt {
				counts[cmd[0].(string)]++
			}
		}
	}
	if counts["HSET"] != 10 || counts["XADD"] != 4 || len(counts) != 2 {
		t.Fatalf("commands over 4 claims = %v, want 10 HSET and 4 XADD", counts)
	}
}
