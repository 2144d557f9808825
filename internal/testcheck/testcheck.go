// Package testcheck holds the assertions that tests of several packages share: a text
// contains what it must, a value equals what it must. It is for tests only and imports
// nothing of Flowstate's.
package testcheck

import (
	"reflect"
	"strings"
	"testing"
)

// Contains reports an error on t for each of wants that got does not contain.
func Contains(t testing.TB, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("want %q in:\n%s", w, got)
		}
	}
}

// Equal reports an error on t, naming what, unless got and want are deeply equal.
func Equal(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %#v, want %#v", what, got, want)
	}
}
