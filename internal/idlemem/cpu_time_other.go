//go:build !unix

package idlemem

import (
	"errors"
	"time"
)

// processCPUTime is not read where the daemons do not run in production
// (their images are Linux): memory is then released once only.
func processCPUTime() (time.Duration, error) {
	return 0, errors.New("process CPU time is not read on this system")
}
