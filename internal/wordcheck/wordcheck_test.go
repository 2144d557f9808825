package wordcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckNamesMissingAndDoubledCounts: a count lost in the middle, one lost at the end
// and one seen twice are each named, and an exact output passes.
func TestCheckNamesMissingAndDoubledCounts(t *testing.T) {
	dir := t.TempDir()
	write := func(lines ...string) {
		if err := os.WriteFile(filepath.Join(dir, "part-0"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a\t1", "a\t2", "a\t3", "b\t1", "b\t2")
	if err := Check(map[string]int64{"a": 3, "b": 2}, dir); err != nil {
		t.Fatalf("exact output: %v", err)
	}
	write("a\t1", "a\t3", "b\t1", "b\t1", "b\t2", "c\t1")
	err := Check(map[string]int64{"a": 4, "b": 2, "c": 1}, dir)
	if err == nil {
		t.Fatal("Check passed an output with counts missing and doubled")
	}
	for _, want := range []string{`"a": want counts 1..4, got [1 3]; missing [2 4]`, `"b": want counts 1..2, got [1 1 2]; more than once [1]`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), `"c"`) {
		t.Errorf("the exact word c is named:\n%v", err)
	}
}
