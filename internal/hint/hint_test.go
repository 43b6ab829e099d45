package hint

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestWithOf(t *testing.T) {
	if With(nil, "x") != nil {
		t.Fatal("With(nil) is not nil")
	}
	err := fmt.Errorf("open: %w", With(With(fs.ErrNotExist, "inner"), "outer"))
	if got := Of(err); got != "outer" {
		t.Fatalf("Of = %q, want the outermost hint", got)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("the cause is lost")
	}
	if Of(errors.New("plain")) != "" {
		t.Fatal("a plain error has a hint")
	}
}
