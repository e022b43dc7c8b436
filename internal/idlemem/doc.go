// Package idlemem gives back the memory an idle daemon does not use.
//
// A Go daemon's resident set is mostly its own executable: the kernel maps
// file pages in 64 KiB fault-around windows, and start-up (package inits,
// parsing sett.yml, dialling Redis, registering) touches a window in almost
// every part of the binary, so after start-up nearly the whole file is
// mapped (measured: 9.2 of 10.7 MB for sett-cub). An idle daemon runs a
// small fraction of that code. Later, each garbage collection maps back the
// type and frame tables it reads (measured: +1.8 MB of sett-cub's read-only
// data at the runtime's forced collection, two minutes into an idle run).
// Release unmaps the executable's read-only segments from this process, so
// that only what runs afterwards is mapped again, and returns freed heap
// memory to the OS.
//
// Nothing is lost by it: the pages are clean copies of the file and stay in
// the page cache, so the next access to one costs a minor fault (no disk
// read). Keep calls it once shortly after the process is ready, and again
// each minute it stays idle; the daemons and the local runtime's
// supervisor run Keep for their whole life.
package idlemem
