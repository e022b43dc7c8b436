package idlemem

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// selfMaps is read to find the executable's mappings; a variable so that
// tests can point it elsewhere.
var selfMaps = "/proc/self/maps"

// dropExecutablePages applies MADV_DONTNEED to every read-only private
// mapping of the executable's inode. For a private file mapping that was
// never written (the read-only segments cannot be) this only removes the
// page-table entries: the next access maps the page-cache page again.
func dropExecutablePages() (Stats, error) {
	var st Stats
	var exe syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &exe); err != nil {
		return st, fmt.Errorf("idlemem: stat own executable: %w", err)
	}
	segs, err := readOnlySegments(selfMaps, exe.Ino)
	if err != nil {
		return st, err
	}
	for _, s := range segs {
		// A raw syscall: unix.Madvise wants a []byte, and a slice over
		// an address read from a file is what vet rightly distrusts.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, s.start, s.end-s.start, unix.MADV_DONTNEED); errno != 0 {
			return st, fmt.Errorf("idlemem: madvise %#x-%#x: %w", s.start, s.end, errno)
		}
		st.Segments++
		st.Mapped += uint64(s.end - s.start)
	}
	return st, nil
}

// segment is one address range of /proc/self/maps.
type segment struct{ start, end uintptr }

// readOnlySegments lists the private mappings of inode that are neither
// writable nor shared, from a maps file ("start-end perms offset dev inode
// path" per line).
func readOnlySegments(path string, inode uint64) ([]segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("idlemem: %w", err)
	}
	defer f.Close()
	var out []segment
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue // anonymous mapping
		}
		perms := fields[1]
		if len(perms) != 4 || perms[1] == 'w' || perms[3] != 'p' {
			continue
		}
		if ino, err := strconv.ParseUint(fields[4], 10, 64); err != nil || ino != inode {
			continue
		}
		from, to, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		out = append(out, segment{uintptr(start), uintptr(end)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("idlemem: read %s: %w", path, err)
	}
	return out, nil
}
