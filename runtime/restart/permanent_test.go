package restart

import (
	"errors"
	"fmt"
	"testing"
)

// TestPermanent: Permanent marks an error so that IsPermanent finds it through further
// wrapping, keeps its message and what it wraps, marks once, and leaves nil alone.
func TestPermanent(t *testing.T) {
	if Permanent(nil) != nil {
		t.Fatal("Permanent(nil) is not nil")
	}
	cause := errors.New("input /data/in does not exist")
	if IsPermanent(cause) || IsPermanent(nil) {
		t.Fatal("an unmarked error counts as permanent")
	}
	p := Permanent(cause)
	if !IsPermanent(p) {
		t.Fatal("a marked error does not count as permanent")
	}
	if p.Error() != cause.Error() {
		t.Fatalf("the marked error says %q, want %q", p, cause)
	}
	if !errors.Is(p, cause) {
		t.Fatal("the marked error does not wrap its cause")
	}
	wrapped := fmt.Errorf("job %q: %w", "orders", p)
	if !IsPermanent(wrapped) {
		t.Fatal("wrapping the marked error loses the mark")
	}
	if again := Permanent(wrapped); again != wrapped {
		t.Fatalf("marking a permanent error again changed it: %#v", again)
	}
}
