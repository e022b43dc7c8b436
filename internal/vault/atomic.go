package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// writeAtomic replaces path with data (temp file in the same folder,
// fsync, rename), leaving no partial file behind on a crash.
func writeAtomic(path string, data []byte) error {
	if err := renameio.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("vault: write %s: %w", path, err)
	}
	return nil
}

// writeIfChanged writes only when the content differs, so that editors
// and file watchers are not woken by identical rewrites.
func writeIfChanged(path string, data []byte) error {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return nil
	}
	return writeAtomic(path, data)
}

// errChanging is returned when a file kept changing while Sett tried to
// update it; the next pass tries again.
var errChanging = errors.New("vault: the file changed while Sett was updating it; trying again on the next pass")

// stamp is what tells one version of a file from the next without
// reading it: size and modification time.
type stamp struct {
	size  int64
	mtime int64
}

func stampOf(fi fs.FileInfo) stamp { return stamp{fi.Size(), fi.ModTime().UnixNano()} }

// statStamp returns path's stamp.
func statStamp(path string) (stamp, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return stamp{}, err
	}
	return stampOf(fi), nil
}

// readCurrent reads path as it is now, with the stamp it had before and
// after the read: ok is false when the file changed while being read.
func readCurrent(path string) (*Doc, stamp, error) {
	for i := 0; i < 3; i++ {
		before, err := statStamp(path)
		if err != nil {
			return nil, stamp{}, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, stamp{}, err
		}
		after, err := statStamp(path)
		if err != nil {
			return nil, stamp{}, err
		}
		if before != after || int64(len(data)) != after.size {
			continue
		}
		d, err := ParseDoc(data)
		if err != nil {
			return nil, stamp{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		return d, after, nil
	}
	return nil, stamp{}, errChanging
}

// updateDoc applies doc's changes (Set, Delete, EditBody) to the current
// content of path and writes it back, unless the file changed between
// the read and the write (then it tries again, up to three times, and
// returns errChanging). A person's edit made since doc was read is kept.
func updateDoc(path string, doc *Doc) error {
	_, err := mergeDoc(path, doc)
	return err
}

// mergeDoc is updateDoc that also returns the stamp of the content it
// merged doc's changes into (zero when it wrote nothing): a stamp other
// than the one doc was read at is an edit made in between, which the
// merge kept — the caller may want to say so.
func mergeDoc(path string, doc *Doc) (stamp, error) {
	if !doc.Changed() {
		return stamp{}, nil
	}
	for i := 0; i < 3; i++ {
		cur, st, err := readCurrent(path)
		if err != nil {
			return stamp{}, err
		}
		before := string(cur.Render())
		doc.ReplayOn(cur)
		out := cur.Render()
		if string(out) == before {
			return stamp{}, nil
		}
		if now, err := statStamp(path); err != nil || now != st {
			continue
		}
		return st, writeAtomic(path, out)
	}
	return stamp{}, errChanging
}

// moveDoc moves from to dir/name with doc's changes applied to from's
// current content (never to the older read doc came from): it writes
// the target (atomically), then removes from only if from did not change
// meanwhile (else it removes the target and tries again). A crash in
// between leaves both, and the next pass finishes the move (every step
// is idempotent). When dir/name holds another file already, a suffix
// keeps both, unless it is the same item (its idKey value matches doc's:
// a move that a crash interrupted).
func moveDoc(from, toDir, name string, doc *Doc, idKey string) (string, error) {
	for i := 0; i < 3; i++ {
		cur, st, err := readCurrent(from)
		if err != nil {
			return "", err
		}
		doc.ReplayOn(cur)
		to := freeName(toDir, name, from, func(p string) bool {
			id := cur.Get(idKey)
			if id == "" {
				return false
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return false
			}
			other, err := ParseDoc(data)
			return err == nil && other.Get(idKey) == id
		})
		if to == from {
			if now, err := statStamp(from); err != nil || now != st {
				continue
			}
			return to, writeAtomic(to, cur.Render())
		}
		if err := writeAtomic(to, cur.Render()); err != nil {
			return "", err
		}
		if now, err := statStamp(from); err != nil || now != st {
			if errors.Is(err, fs.ErrNotExist) {
				return to, nil // moved or removed by the person meanwhile
			}
			// The person saved again while Sett moved the file: their
			// newer text wins; the move starts over from it.
			_ = os.Remove(to)
			continue
		}
		if err := os.Remove(from); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return to, fmt.Errorf("vault: remove %s: %w", from, err)
		}
		return to, nil
	}
	return "", errChanging
}

// freeName returns dir/name, or dir/<stem>-N.md when that is taken by a
// file other than self (or one same says is the same item).
func freeName(dir, name, self string, same func(string) bool) string {
	p := filepath.Join(dir, name)
	if p == self {
		return p
	}
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) || (err == nil && same(p)) {
		return p
	}
	ext := filepath.Ext(name)
	stem := name[:len(name)-len(ext)]
	for i := 2; ; i++ {
		q := filepath.Join(dir, fmt.Sprintf("%s-%d%s", stem, i, ext))
		if q == self {
			return q
		}
		if _, err := os.Lstat(q); errors.Is(err, fs.ErrNotExist) || (err == nil && same(q)) {
			return q
		}
	}
}
