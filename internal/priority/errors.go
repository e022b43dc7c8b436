package priority

import "errors"

// ErrInvalidPriority is returned (wrapped, naming the value) by Score and
// ParsePriority for a priority that is neither a known label nor a whole
// number in range.
var ErrInvalidPriority = errors.New("priority: invalid priority")

// ErrInvalidDeadline is returned (wrapped, naming the value) by Score and
// ParseDeadline for a deadline in no accepted form.
var ErrInvalidDeadline = errors.New("priority: invalid deadline")

// ErrInvalidSender is returned (wrapped, naming the value) by
// ValidateSender for an important-senders entry that is neither an address
// nor "@domain".
var ErrInvalidSender = errors.New("priority: invalid important sender")
