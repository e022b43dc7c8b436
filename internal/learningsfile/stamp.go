package learningsfile

import (
	"io/fs"
	"syscall"
	"time"
)

// stamp identifies a version of a file well enough to notice a change.
type stamp struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// stampOf builds a file's stamp. The inode matters: an atomic replace by
// an editor keeps size and may keep the modification time, but never the
// inode.
func stampOf(fi fs.FileInfo) stamp {
	st := stamp{size: fi.Size(), mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st
}
