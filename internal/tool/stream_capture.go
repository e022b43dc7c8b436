package tool

import (
	"errors"
	"io"
	"os"
)

// tailSize is how much of the end of each stream a Result keeps for failure
// reports.
const tailSize = 4 << 10

// streamCapture drains one output pipe of the child. It keeps the first max
// bytes, the last tailSize bytes and the total count. When limitFunc is set,
// it is called once, from the reading goroutine, as soon as the total
// exceeds max.
//
// Its fields are written by the reading goroutine only and read after done
// is closed.
type streamCapture struct {
	max       int
	limitFunc func()

	data     []byte
	tail     tailBuffer
	total    int64
	exceeded bool
	readErr  error // first read error other than EOF or a closed pipe
	done     chan struct{}
}

func newStreamCapture(limit int, limitFunc func()) *streamCapture {
	return &streamCapture{max: limit, limitFunc: limitFunc, done: make(chan struct{})}
}

// drain reads r until EOF or until r is closed, then closes done. It keeps
// reading after max is exceeded so that the total is counted and the pipe
// never fills up and blocks the writer.
func (c *streamCapture) drain(r *os.File) {
	defer close(c.done)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.write(buf[:n])
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				c.readErr = err
			}
			return
		}
	}
}

func (c *streamCapture) write(p []byte) {
	c.total += int64(len(p))
	c.tail.write(p)
	if room := c.max - len(c.data); room > 0 {
		c.data = append(c.data, p[:min(room, len(p))]...)
	}
	if !c.exceeded && c.total > int64(c.max) {
		c.exceeded = true
		if c.limitFunc != nil {
			c.limitFunc()
		}
	}
}

// tailBuffer keeps the last tailSize bytes written to it. The zero value is
// empty and ready to use; it is not safe for concurrent use.
type tailBuffer struct {
	buf []byte
}

func (t *tailBuffer) write(p []byte) {
	if len(p) >= tailSize {
		t.buf = append(t.buf[:0], p[len(p)-tailSize:]...)
		return
	}
	if over := len(t.buf) + len(p) - tailSize; over > 0 {
		// Shift in place so the buffer never grows beyond tailSize.
		n := copy(t.buf, t.buf[over:])
		t.buf = t.buf[:n]
	}
	t.buf = append(t.buf, p...)
}

// bytes returns a copy of the tail, nil when nothing was written.
func (t *tailBuffer) bytes() []byte {
	if len(t.buf) == 0 {
		return nil
	}
	return append([]byte(nil), t.buf...)
}
