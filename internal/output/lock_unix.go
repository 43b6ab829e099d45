//go:build unix

package output

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// canLock: flock(2) is available.
const canLock = true

// tryLock takes an exclusive flock on f without waiting. It reports false
// when another open file holds it.
func tryLock(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOLCK), errors.Is(err, unix.ENOTSUP), errors.Is(err, unix.EOPNOTSUPP):
			// A file system without locks (some network mounts): write
			// unlocked rather than not at all.
			return true, nil
		}
		return false, err
	}
}
