package prompt

import "errors"

// ErrTemplate is matched (errors.Is) by every error about a template that
// cannot be loaded or rendered: unknown name, unreadable file, syntax
// error, missing "user" block, execution error, empty prompt. The message
// names the template and what to fix.
var ErrTemplate = errors.New("prompt: template")
