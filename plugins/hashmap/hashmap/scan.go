package hashmap

import (
	"slices"
	"strings"
)

// entry is a pair found by a scan, still pointing into a shard's map.
type entry struct {
	k string
	v []byte
}

// smallest returns, in key order, the limit smallest pairs with start <= key < end (nil end:
// no bound). It looks only at the shards that may hold such keys and keeps the best limit
// pairs in a max-heap, so that a small page of a large range costs one pass and no sort of
// the whole range.
func (kb *keyed) smallest(start, end []byte, limit int) []entry {
	var h []entry // max-heap on k once it holds limit entries
	for _, i := range kb.layout.shardsFor(start, end) {
		for k, v := range kb.shards[i].m {
			if k < string(start) || (end != nil && k >= string(end)) {
				continue
			}
			switch {
			case len(h) < limit:
				h = append(h, entry{k, v})
				if len(h) == limit {
					heapify(h)
				}
			case k < h[0].k:
				h[0] = entry{k, v}
				siftDown(h, 0)
			}
		}
	}
	slices.SortFunc(h, func(a, b entry) int { return strings.Compare(a.k, b.k) })
	return h
}

// heapify makes h a max-heap on k.
func heapify(h []entry) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
}

// siftDown restores the max-heap property below i.
func siftDown(h []entry, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && h[r].k > h[l].k {
			c = r
		}
		if h[c].k <= h[i].k {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
