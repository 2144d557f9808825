package dataflow

import (
	"context"
	"fmt"
	"testing"
)

// TestReleasedAlignmentKeepsTheNextBarrierBehindItsRecords drives one receiver and its two
// senders through the interleaving of an aborted checkpoint: sender a passes barrier 1,
// the receiver releases checkpoint 1 (aborted) before sender b's barrier 1 message was
// taken, b's records sent before that message are still in the inbox, and then both
// senders pass barrier 2. The alignment of barrier 2 must wait for b's records: a
// snapshot taken earlier would lack records that precede its barriers.
func TestReleasedAlignmentKeepsTheNextBarrierBehindItsRecords(t *testing.T) {
	for _, c := range []struct {
		name string
		// late: b sends its records and barrier 1 only after the receiver released 1
		// (else before, still in the inbox when it releases).
		late bool
	}{{"b sends barrier 1 after the release", true}, {"b's barrier 1 waits in the inbox at the release", false}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			in := newInbox(2)
			keyOf := func(r any) []byte { return []byte(fmt.Sprint(r)) }
			a := newOutput(0, []*inbox{in}, true, keyOf, 128, 100, nil)
			b := newOutput(1, []*inbox{in}, true, keyOf, 128, 100, nil)
			// The receiver is the last stage's subtask, with no next stage to pass barriers to.
			recv := &stageTask{in: in, inputs: 2, out: newOutput(0, nil, true, keyOf, 128, 100, nil)}
			b1, b2 := &barrier{id: 1}, &barrier{id: 2}
			const records = 5
			sendB := func() {
				for i := range records {
					b.emit(ctx, i)
				}
				if err := b.broadcast(ctx, b1); err != nil { // flushes the records first
					t.Fatal(err)
				}
			}
			release := func() {
				recv.lastAborted = 1 // as commit learns it from the coordinator
				if err := recv.releaseAborted(ctx); err != nil {
					t.Fatal(err)
				}
				if in.alignedID.Load() != 1 {
					t.Fatalf("the receiver did not release checkpoint 1 (aligned %d)", in.alignedID.Load())
				}
			}

			if err := a.broadcast(ctx, b1); err != nil {
				t.Fatal(err)
			}
			if c.late {
				release()
				sendB()
			} else {
				sendB()
				release()
			}
			for _, o := range []*output{b, a} {
				if err := o.broadcast(ctx, b2); err != nil {
					t.Fatal(err)
				}
			}

			// The receiver, as stageTask.run: barrier 2 passed by every input aligns it at once.
			if next, all := in.passed(); all {
				t.Fatalf("barrier %d passed by every input while %d messages sent before it are still in the inbox", next.id, len(in.ch))
			}
			taken := 0
			for len(in.ch) > 0 {
				m := <-in.ch
				if m.barrier == nil {
					taken += len(m.recs)
					continue
				}
				done, err := recv.arrive(ctx, m.barrier)
				if err != nil {
					t.Fatal(err)
				}
				if done == nil {
					continue
				}
				if done.id != 2 || taken != records || len(in.ch) != 0 {
					t.Fatalf("barrier %d aligned with %d of b's %d records taken and %d messages left in the inbox", done.id, taken, records, len(in.ch))
				}
				return
			}
			t.Fatalf("barrier 2 was never aligned (%d of b's %d records taken)", taken, records)
		})
	}
}

// TestReleasedBatchKeepsNoRecords: a batch handed back for reuse keeps no reference to
// the records and keys it carried, and a batch taken for reuse starts empty.
func TestReleasedBatchKeepsNoRecords(t *testing.T) {
	m := newBatch(4)
	for i := range 3 {
		m.recs = append(m.recs, fmt.Sprint("record", i))
		m.keys = append(m.keys, []byte(fmt.Sprint("key", i)))
		m.groups = append(m.groups, i)
	}
	recs, keys := m.recs, m.keys
	releaseBatch(m)
	for i := range recs {
		if recs[i] != nil || keys[i] != nil {
			t.Fatalf("slot %d still holds record %v, key %q after release", i, recs[i], keys[i])
		}
	}
	if n := newBatch(4); len(n.recs) != 0 || len(n.keys) != 0 || len(n.groups) != 0 || n.barrier != nil {
		t.Fatalf("a new batch holds %d records, %d keys, %d groups, barrier %v; want none", len(n.recs), len(n.keys), len(n.groups), n.barrier)
	}
}
