package reviewpolicy

import "errors"

// ErrInvalidPolicy is matched (with errors.Is) by the error Policy.Validate
// returns: a policy whose fields contradict each other.
var ErrInvalidPolicy = errors.New("reviewpolicy: invalid policy")
