package idlemem

import "runtime/debug"

// Stats says what one Release gave back, in bytes: Mapped is the size of
// the executable's read-only mappings that were dropped from this
// process (resident or not), Segments how many there were.
type Stats struct {
	Segments int
	Mapped   uint64
}

// Release drops this process's mappings of its executable's read-only
// segments (text, read-only data, pclntab; never the writable data) and
// returns freed heap memory to the OS. rewarm, when not nil, runs between
// the two (see below). It is safe to call at any time and from any
// goroutine; errors only mean nothing or less was released (no /proc, an
// unsupported system), never that the process is harmed.
func Release(rewarm func()) (Stats, error) {
	// The heap first: FreeOSMemory runs a full collection, which reads the
	// stack maps and type data of the whole program; dropping the pages
	// before it would map most of them straight back.
	debug.FreeOSMemory()
	// The collection also shrinks the stacks of waiting goroutines. A
	// goroutine that grows its stack again copies it, which reads the
	// frame tables (pclntab) of every function on it: after the drop that
	// maps them back. rewarm lets the daemon run its periodic work once
	// now, so that those stacks grow back while the pages are still there.
	if rewarm != nil {
		rewarm()
	}
	return dropExecutablePages()
}
