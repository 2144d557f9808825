package state

import (
	"fmt"
	"testing"
)

func TestKeyGroupRangesPartitionAllGroups(t *testing.T) {
	for _, maxP := range []int{1, 7, 128, 1000} {
		for p := 1; p <= 9 && p <= maxP; p++ {
			next := 0
			for i := 0; i < p; i++ {
				r := KeyGroupRangeFor(maxP, p, i)
				if r.Start != next {
					t.Fatalf("maxP=%d p=%d subtask %d starts at %d, want %d", maxP, p, i, r.Start, next)
				}
				for g := r.Start; g < r.End; g++ {
					if s := SubtaskForKeyGroup(maxP, p, g); s != i {
						t.Fatalf("maxP=%d p=%d: key group %d in range of %d but routed to %d", maxP, p, g, i, s)
					}
				}
				next = r.End
			}
			if next != maxP {
				t.Fatalf("maxP=%d p=%d: ranges end at %d", maxP, p, next)
			}
		}
	}
}

func TestKeyGroupsSpreadKeys(t *testing.T) {
	counts := make([]int, 128)
	for i := 0; i < 128000; i++ {
		counts[KeyGroupFor([]byte(fmt.Sprintf("word%d", i)), 128)]++
	}
	for g, c := range counts {
		if c < 800 || c > 1200 {
			t.Fatalf("key group %d got %d of 128000 keys; hash is skewed", g, c)
		}
	}
}
