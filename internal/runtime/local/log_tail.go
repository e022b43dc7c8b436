package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// followPoll is how often a followed log is checked for new bytes. A
// ticker is plenty for a human reading a log, and needs no file
// notification library.
const followPoll = 200 * time.Millisecond

// tailLines returns the last n lines of a file (reading at most its last
// 16 KiB), or a note saying why it could not be read.
func tailLines(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	const window = 16 << 10
	st, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	start := max(st.Size()-window, 0)
	b := make([]byte, st.Size()-start)
	if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if start > 0 && len(lines) > 1 {
		lines = lines[1:] // the first line is probably cut
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	text := strings.Join(lines, "\n")
	if strings.TrimSpace(text) == "" {
		return "(the log is empty)"
	}
	return text
}

// copyLog writes the file at path to w. With follow it then keeps writing
// what is appended, checking every followPoll, until ctx ends (which is
// not an error); a file that shrinks (truncated) is followed from its new
// start.
func copyLog(ctx context.Context, path string, w io.Writer, follow bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("local: open log: %w", err)
	}
	defer f.Close()
	offset, err := io.Copy(w, f)
	if err != nil {
		return fmt.Errorf("local: read log: %w", err)
	}
	if !follow {
		return nil
	}
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("local: read log: %w", err)
		}
		if st.Size() < offset {
			if offset, err = f.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("local: read log: %w", err)
			}
		}
		if st.Size() == offset {
			continue
		}
		n, err := io.Copy(w, f)
		offset += n
		if err != nil {
			return fmt.Errorf("local: read log: %w", err)
		}
	}
}
