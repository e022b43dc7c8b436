package scaffold

import "errors"

// ErrExists is returned (wrapped, listing the files) by Write when files
// it would write already exist and force is not set. Nothing is written
// then.
var ErrExists = errors.New("scaffold: files already exist")
