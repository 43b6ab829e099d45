package errcode

import (
	"errors"
	"fmt"
	"testing"
)

func TestOfAndIs(t *testing.T) {
	parent := New("test_policy", "policy not met", "change the policy")
	child := Sub(parent, "test_threshold", "too few signers", "add a signer")
	err := fmt.Errorf("app.cloud: %w: 1 of 2", child)
	if !errors.Is(err, child) || !errors.Is(err, parent) {
		t.Fatal("errors.Is lost the sentinel or its parent")
	}
	if got := Of(err); got != "test_threshold" {
		t.Fatalf("Of = %q, want the outermost code", got)
	}
	if got := HintOf(err); got != "add a signer" {
		t.Fatalf("HintOf = %q", got)
	}
	if Of(errors.New("plain")) != "" || HintOf(nil) != "" {
		t.Fatal("a plain error has a code or hint")
	}
	if err.Error() != "app.cloud: too few signers: 1 of 2" {
		t.Fatalf("message %q", err)
	}
}

func TestAllSorted(t *testing.T) {
	New("test_zz", "z", "z")
	New("test_aa", "a", "a")
	all := All()
	for i := 1; i < len(all); i++ {
		if all[i-1].Code() > all[i].Code() {
			t.Fatalf("All is not sorted: %q before %q", all[i-1].Code(), all[i].Code())
		}
	}
}

func TestFieldError(t *testing.T) {
	class := New("test_field", "bad option", "fix the option")
	err := fmt.Errorf("load: %w", &FieldError{Field: "MinSigners", Value: "0", Reason: "at least 1", Err: class})
	var fe *FieldError
	if !errors.As(err, &fe) || !errors.Is(err, class) || Of(err) != "test_field" {
		t.Fatalf("the field error or its class is lost: %v", err)
	}
	if got := err.Error(); got != "load: MinSigners 0: at least 1" {
		t.Fatalf("message %q", got)
	}
	named := fe.Named("--min-signers")
	if named.Error() != "--min-signers 0: at least 1" || !errors.Is(named, class) || fe.Field != "MinSigners" {
		t.Fatalf("Named: %q (original %q)", named, fe.Field)
	}
}
