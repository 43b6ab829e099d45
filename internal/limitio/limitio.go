// Package limitio reads untrusted input with a size bound: a read never
// holds more than the limit plus one byte, and input above the limit is an
// error the caller can recognise and explain in its own terms. Reader and
// Writer count the bytes that pass through them (the one counter every
// package uses).
package limitio

import (
	"fmt"
	"io"
	"os"
)

// A TooLargeError reports input above Limit bytes.
type TooLargeError struct {
	Limit int64
}

func (e *TooLargeError) Error() string { return fmt.Sprintf("larger than %d bytes", e.Limit) }

// ReadAll reads r to its end. Input above limit bytes stops the read and
// returns a *TooLargeError; other errors are the reader's.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return b, nil
}

// ReadFile reads the named file as ReadAll does.
func ReadFile(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, limit)
}
