package bench

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// RoundTripProxy forwards one daemon's Redis connections and counts what
// the daemon asks of Redis: round trips, commands, and each round trip's
// shape ("fcall:submit_bid", "hgetall×5+time"...).
//
// A round trip is a turn of the conversation on one connection: the client
// sends (one command, or a whole pipeline, in as many TCP segments as it
// takes) and then waits for the server. The proxy counts a turn when the
// client sends after the server last spoke (or first), which is exact for
// go-redis, whose connections carry one request at a time. Pub/sub pushes
// are server turns without a request and are not counted. Commands are
// parsed from the RESP the client sends; a pipeline of five HGETALLs is one
// round trip and five commands. Commands that Lua scripts run inside Redis
// never cross the proxy: INFO commandstats counts those.
//
// Safe for concurrent use.
type RoundTripProxy struct {
	Name    string
	target  string
	scripts map[string]string // EVALSHA sha → script name
	ln      net.Listener

	mu     sync.Mutex
	counts ProxyCounts
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// ProxyCounts are the counters of a proxy since it started (or the
// difference of two snapshots).
type ProxyCounts struct {
	RoundTrips int64
	Commands   int64
	// Shapes counts finished round trips by the commands they carried.
	Shapes map[string]int64
	// Connections is the number of connections accepted.
	Connections int64
}

// Sub returns c - prev.
func (c ProxyCounts) Sub(prev ProxyCounts) ProxyCounts {
	d := ProxyCounts{RoundTrips: c.RoundTrips - prev.RoundTrips, Commands: c.Commands - prev.Commands,
		Connections: c.Connections - prev.Connections, Shapes: map[string]int64{}}
	for k, v := range c.Shapes {
		if n := v - prev.Shapes[k]; n != 0 {
			d.Shapes[k] = n
		}
	}
	return d
}

// Add returns c + o.
func (c ProxyCounts) Add(o ProxyCounts) ProxyCounts {
	s := ProxyCounts{RoundTrips: c.RoundTrips + o.RoundTrips, Commands: c.Commands + o.Commands,
		Connections: c.Connections + o.Connections, Shapes: map[string]int64{}}
	for k, v := range c.Shapes {
		s.Shapes[k] += v
	}
	for k, v := range o.Shapes {
		s.Shapes[k] += v
	}
	return s
}

// NewRoundTripProxy listens on a free loopback port and forwards every
// connection to target. scripts names EVALSHA digests in shapes (nil: the
// digest's first 8 characters).
func NewRoundTripProxy(name, target string, scripts map[string]string) (*RoundTripProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: proxy listen: %w", err)
	}
	p := &RoundTripProxy{Name: name, target: target, scripts: scripts, ln: ln,
		counts: ProxyCounts{Shapes: map[string]int64{}}, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address daemons connect to.
func (p *RoundTripProxy) Addr() string { return p.ln.Addr().String() }

// Snapshot returns a copy of the counters.
func (p *RoundTripProxy) Snapshot() ProxyCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counts
	c.Shapes = make(map[string]int64, len(p.counts.Shapes))
	for k, v := range p.counts.Shapes {
		c.Shapes[k] = v
	}
	return c
}

// Close stops listening, closes every connection and waits for the
// forwarding goroutines. Safe to call twice.
func (p *RoundTripProxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *RoundTripProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = client.Close()
			_ = server.Close()
			return
		}
		p.conns[client], p.conns[server] = struct{}{}, struct{}{}
		p.counts.Connections++
		p.mu.Unlock()
		c := &proxyConn{p: p}
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			c.pump(server, client, true)
			p.forget(server)
		}()
		go func() {
			defer p.wg.Done()
			c.pump(client, server, false)
			p.forget(client)
		}()
	}
}

// forget closes a connection (which ends the pump of the other direction)
// and drops it from the set Close closes.
func (p *RoundTripProxy) forget(c net.Conn) {
	_ = c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// proxyConn is the state of one forwarded connection. Its fields are
// guarded by p.mu (the rate of requests is far below what one mutex
// serves).
type proxyConn struct {
	p *RoundTripProxy
	// clientTurn is true from the client's first bytes of a request until
	// the server's first bytes of the answer.
	clientTurn bool
	parser     respParser
	shape      []string
}

// pump copies src to dst; fromClient says which way it runs. The counters
// are updated before the bytes are forwarded, so the other side cannot
// react to bytes that are not counted yet.
func (c *proxyConn) pump(dst, src net.Conn, fromClient bool) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			c.observe(buf[:n], fromClient)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			c.p.mu.Lock()
			c.finishTurn()
			c.p.mu.Unlock()
			return
		}
	}
}

func (c *proxyConn) observe(b []byte, fromClient bool) {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !fromClient {
		c.finishTurn()
		return
	}
	if !c.clientTurn {
		c.clientTurn = true
		p.counts.RoundTrips++
	}
	for _, cmd := range c.parser.feed(b) {
		p.counts.Commands++
		c.shape = append(c.shape, commandLabel(cmd, p.scripts))
	}
}

// finishTurn records the shape of the request that just got its answer.
// Callers hold p.mu.
func (c *proxyConn) finishTurn() {
	if c.clientTurn && len(c.shape) > 0 {
		c.p.counts.Shapes[shapeOf(c.shape)]++
	}
	c.clientTurn, c.shape = false, nil
}

// scriptOfFunction is the script a function of internal/blackboard's library
// runs: fn without its "sett_<16 hex digits>_" library prefix.
func scriptOfFunction(fn string) string {
	const prefix = len("sett_") + 16 + 1
	if strings.HasPrefix(fn, "sett_") && len(fn) > prefix && fn[prefix-1] == '_' {
		return fn[prefix:]
	}
	return fn
}

// commandLabel names a command for shapes: the lower-case command, the
// script name for EVALSHA and FCALL (internal/blackboard's functions are
// sett_<16 hex digits>_<script>), and "(block)" for blocking stream reads.
func commandLabel(args []string, scripts map[string]string) string {
	if len(args) == 0 {
		return "?"
	}
	name := strings.ToLower(args[0])
	switch name {
	case "evalsha":
		if len(args) > 1 {
			if s, ok := scripts[args[1]]; ok {
				return "evalsha:" + s
			}
			if len(args[1]) >= 8 {
				return "evalsha:" + args[1][:8]
			}
		}
	case "fcall", "fcall_ro":
		if len(args) > 1 {
			return name + ":" + scriptOfFunction(args[1])
		}
	case "xread", "xreadgroup":
		for _, a := range args[1:] {
			if strings.EqualFold(a, "block") {
				return name + "(block)"
			}
		}
	case "client", "script", "function", "xgroup", "command":
		if len(args) > 1 {
			return name + " " + strings.ToLower(args[1])
		}
	}
	return name
}

// shapeOf joins a request's command labels, with runs collapsed:
// [hgetall hgetall time] → "hgetall×2+time".
func shapeOf(labels []string) string {
	var b strings.Builder
	for i := 0; i < len(labels); {
		j := i
		for j < len(labels) && labels[j] == labels[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte('+')
		}
		b.WriteString(labels[i])
		if j-i > 1 {
			b.WriteString("×" + strconv.Itoa(j-i))
		}
		i = j
	}
	return b.String()
}

// respParser splits a client's byte stream into commands: RESP arrays of
// bulk strings (what every client library sends) or inline commands.
// Arguments longer than maxArgKeep bytes are replaced by "…": only names,
// digests and options matter here, never payloads.
type respParser struct {
	buf []byte
}

const maxArgKeep = 64

var errIncomplete = errors.New("incomplete")

// feed appends b and returns every command completed by it.
func (r *respParser) feed(b []byte) [][]string {
	r.buf = append(r.buf, b...)
	var out [][]string
	for len(r.buf) > 0 {
		args, n, err := parseCommand(r.buf)
		if errors.Is(err, errIncomplete) {
			break
		}
		if err != nil {
			// Not RESP we understand: drop what we have, keep counting
			// round trips.
			r.buf = r.buf[:0]
			break
		}
		out = append(out, args)
		r.buf = r.buf[n:]
	}
	if len(r.buf) == 0 {
		r.buf = nil // let a large pipeline's buffer go
	}
	return out
}

// parseCommand parses one command at the start of b and returns its
// arguments and its length in bytes.
func parseCommand(b []byte) ([]string, int, error) {
	if b[0] != '*' {
		end := bytes.Index(b, []byte("\r\n"))
		if end < 0 {
			return nil, 0, errIncomplete
		}
		return strings.Fields(string(b[:end])), end + 2, nil
	}
	count, pos, err := readInt(b, 1)
	if err != nil {
		return nil, 0, err
	}
	args := make([]string, 0, min(max(count, 0), 16))
	for i := 0; i < count; i++ {
		if pos >= len(b) {
			return nil, 0, errIncomplete
		}
		if b[pos] != '$' {
			return nil, 0, fmt.Errorf("bench: RESP: expected a bulk string at %d", pos)
		}
		size, next, err := readInt(b, pos+1)
		if err != nil {
			return nil, 0, err
		}
		if size < 0 || next+size+2 > len(b) {
			if size < 0 {
				return nil, 0, fmt.Errorf("bench: RESP: negative bulk length")
			}
			return nil, 0, errIncomplete
		}
		if len(args) < 16 {
			if size <= maxArgKeep {
				args = append(args, string(b[next:next+size]))
			} else {
				args = append(args, "…")
			}
		}
		pos = next + size + 2
	}
	return args, pos, nil
}

// readInt reads a decimal integer terminated by CRLF starting at b[i].
func readInt(b []byte, i int) (int, int, error) {
	end := bytes.Index(b[i:], []byte("\r\n"))
	if end < 0 {
		return 0, 0, errIncomplete
	}
	n, err := strconv.Atoi(string(b[i : i+end]))
	if err != nil {
		return 0, 0, fmt.Errorf("bench: RESP: bad length %q", b[i:i+end])
	}
	return n, i + end + 2, nil
}

// topShapes returns the shapes sorted by count, highest first.
func topShapes(shapes map[string]int64) []string {
	keys := make([]string, 0, len(shapes))
	for k := range shapes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if shapes[keys[i]] != shapes[keys[j]] {
			return shapes[keys[i]] > shapes[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}
