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

// moveDoc writes doc to dir/name (atomically) and then removes from: a
// crash in between leaves both, and the next pass finishes the move
// (every step is idempotent). When dir/name holds another file already,
// a suffix keeps both, unless it is the same item (its idKey value
// matches doc's: a move that a crash interrupted).
func moveDoc(from, toDir, name string, doc *Doc, idKey string) (string, error) {
	to := freeName(toDir, name, from, func(p string) bool {
		id := doc.Get(idKey)
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
	if err := writeAtomic(to, doc.Render()); err != nil {
		return "", err
	}
	if from != to {
		if err := os.Remove(from); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return to, fmt.Errorf("vault: remove %s: %w", from, err)
		}
	}
	return to, nil
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
