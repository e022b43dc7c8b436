package idlemem

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestReadOnlySegmentsKeepsOnlyTheExecutablesReadOnlyPrivateMappings(t *testing.T) {
	maps := `00400000-00892000 r-xp 00000000 fd:00 4242 /bin/sett-cub
00892000-00e3c000 r--p 00492000 fd:00 4242 /bin/sett-cub
00e3c000-00e5f000 rw-p 00a3c000 fd:00 4242 /bin/sett-cub
00e5f000-02e80000 rw-p 00000000 00:00 0
7f0000000000-7f0000001000 r--s 00000000 fd:00 4242 /bin/sett-cub
7f0000002000-7f0000003000 r--p 00000000 fd:00 777 /usr/lib/other.so
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]
`
	path := filepath.Join(t.TempDir(), "maps")
	if err := os.WriteFile(path, []byte(maps), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readOnlySegments(path, 4242)
	if err != nil {
		t.Fatal(err)
	}
	want := []segment{{0x400000, 0x892000}, {0x892000, 0xe3c000}}
	if len(got) != len(want) {
		t.Fatalf("segments = %#v, want %#v (text and rodata only: not the writable data, the shared mapping or another file)", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("segment %d = %#x-%#x, want %#x-%#x", i, got[i].start, got[i].end, want[i].start, want[i].end)
		}
	}
}

func TestReadOnlySegmentsNamesAMissingMapsFile(t *testing.T) {
	_, err := readOnlySegments(filepath.Join(t.TempDir(), "nope"), 1)
	if err == nil || !strings.Contains(err.Error(), "idlemem:") {
		t.Fatalf("err = %v, want an idlemem error", err)
	}
}

// TestReleaseUnmapsMostOfTheExecutable checks the effect the daemons rely
// on, in this test binary: the executable's resident pages (Rss of its
// read-only mappings in /proc/self/smaps) fall well below what start-up
// left mapped, and the process goes on running code afterwards. rewarm
// runs once, while the pages are still mapped.
func TestReleaseUnmapsMostOfTheExecutable(t *testing.T) {
	before := executableRSSKiB(t)
	during, rewarms := 0, 0
	st, err := Release(func() { during = executableRSSKiB(t); rewarms++ })
	if err != nil {
		t.Fatal(err)
	}
	if rewarms != 1 {
		t.Fatalf("rewarm ran %d times, want once", rewarms)
	}
	if st.Segments == 0 || st.Mapped == 0 {
		t.Fatalf("Release = %+v, want the executable's read-only segments", st)
	}
	after := executableRSSKiB(t)
	t.Logf("read-only mappings of the test binary: %d KiB resident before, %d KiB after", before, after)
	// Reading smaps and logging map some pages straight back, and a test
	// binary is small, so the bar is lower than the daemons' (9.2 → 4-5 MB).
	if after*5 > before*4 {
		t.Fatalf("resident after Release = %d KiB, want at most 80 %% of the %d KiB before", after, before)
	}
	if during*5 < before*4 {
		t.Errorf("resident while rewarm ran = %d KiB of %d KiB before: rewarm ran after the drop, want before it", during, before)
	}
}

// executableRSSKiB sums the Rss of this process's read-only private
// mappings of its executable.
func executableRSSKiB(t *testing.T) int {
	t.Helper()
	var exe syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &exe); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	total, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && len(fields) >= 5 {
			ino, _ := strconv.ParseUint(fields[4], 10, 64)
			in = ino == exe.Ino && fields[1][1] != 'w'
			continue
		}
		if in && fields[0] == "Rss:" {
			n, _ := strconv.Atoi(fields[1])
			total += n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if total == 0 {
		t.Fatal("no resident read-only mapping of the executable found in /proc/self/smaps")
	}
	return total
}
