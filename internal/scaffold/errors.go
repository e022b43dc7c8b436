package scaffold

import "errors"

// ErrExists is returned (wrapped, listing the files) by Write when files
// it would write already exist and force is not set. Nothing is written
// then.
var ErrExists = errors.New("scaffold: files already exist")

// ErrUnknownTemplate is returned (wrapped, naming the value and the known
// templates) for a template name that does not exist.
var ErrUnknownTemplate = errors.New("scaffold: unknown template")
