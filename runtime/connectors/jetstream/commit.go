package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/restart"
)

// PreCommit implements dataflow.SinkWriter: the interval's records become a pending
// transaction of checkpoint id, and the sink state holds every pending transaction,
// those of the commit in flight included (a restore from it skips what their chain
// shows as committed).
func (w *writer) PreCommit(id int64) ([]byte, error) {
	w.mu.Lock()
	if t := w.cur; t != nil && t.Records > 0 {
		t.Checkpoint = id
		t.keys = nil
		w.pending = append(w.pending, t)
	}
	w.cur = nil
	st := sinkState{Job: w.s.Job, Checkpoint: id, Chains: map[string]uint64{}, Txs: slices.Clone(w.pending)}
	for id, c := range w.chains {
		st.Chains[strconv.Itoa(id)] = c.last
	}
	w.mu.Unlock()
	return st.encode() // a pending transaction does not change once pre-committed
}

// Commit implements dataflow.SinkWriter: the pending transactions up to id are published,
// in the background, so that the subtask goes on writing while the server takes them.
// Commit first waits for the commit before it, and returns its error if it failed; Flush
// waits for the last one. A commit in flight is safe to lose: its transactions are in
// the checkpoints until it is done, and the marker chains tell a restored writer which of
// their parts landed.
func (w *writer) Commit(id int64) error {
	if err := w.Flush(); err != nil {
		return err
	}
	w.mu.Lock()
	n := 0
	for n < len(w.pending) && w.pending[n].Checkpoint <= id {
		n++
	}
	txs := slices.Clone(w.pending[:n])
	w.mu.Unlock()
	if len(txs) == 0 {
		return nil
	}
	done := make(chan error, 1)
	w.inflight = done
	go func() { done <- w.commitTxs(txs) }()
	return nil
}

// Flush implements dataflow.Flusher: it waits for the commit in flight and returns the
// error of the first commit that failed.
func (w *writer) Flush() error {
	if w.inflight != nil {
		if err := <-w.inflight; err != nil && w.failed == nil {
			w.failed = err
		}
		w.inflight = nil
	}
	return w.failed
}

// commitTxs publishes txs, the oldest pending transactions in order, and drops each from
// the pending ones once committed.
func (w *writer) commitTxs(txs []*tx) error {
	start, parts0, records0 := time.Now(), w.committed, w.committedRecords
	defer func() {
		if w.ev != nil && w.committed > parts0 {
			w.ev.Committed(w.committedRecords-records0, w.committed-parts0, time.Since(start))
		}
	}()
	for _, t := range txs {
		if err := w.commitTx(context.Background(), t); err != nil {
			return err
		}
		w.mu.Lock()
		if len(w.pending) > 0 && w.pending[0] == t {
			w.pending = w.pending[1:]
		}
		w.mu.Unlock()
	}
	return nil
}

// Measure implements dataflow.Measured: each Commit that published reports its records,
// its batches (the atomic publishes of its parts) and how long it took.
func (w *writer) Measure(ev dataflow.ConnectorEvents) { w.ev = ev }

// commitTx publishes the parts of t its chain does not show as committed.
func (w *writer) commitTx(ctx context.Context, t *tx) error {
	c := w.chains[t.Chain]
	parts := t.parts()
	skipped := 0
	for part := 1; part <= parts; part++ {
		m := mark{t.Epoch, t.Checkpoint, part}
		if !c.done.less(m) {
			skipped++
			continue
		}
		if err := w.commitPart(ctx, c, t, part, parts); err != nil {
			return err
		}
		w.committed++
		w.committedRecords += min(t.PartSize, t.Records-(part-1)*t.PartSize)
		if w.s.failAfterParts > 0 && w.committed >= w.s.failAfterParts {
			return errors.New("injected failure after committing parts")
		}
	}
	if skipped > 0 && w.s.Logger != nil {
		w.s.Logger.Info("jetstream sink skips parts its markers show as committed", "subject", c.subject, "checkpoint", t.Checkpoint, "parts", skipped, "of", parts)
	}
	return nil
}

// commitPart publishes part (1-based, of parts) of t as one atomic batch, its last message
// the marker.
func (w *writer) commitPart(ctx context.Context, c *chain, t *tx, part, parts int) error {
	from := (part - 1) * t.PartSize
	to := min(from+t.PartSize, t.Records)
	msgs := make([]*nats.Msg, 0, to-from+1)
	for i := from; i < to; i++ {
		m := nats.NewMsg(t.Subjects[t.subj[i]])
		m.Data = t.payload(i)
		msgs = append(msgs, m)
	}
	mk := marker{Job: w.s.Job, Subtask: c.subtask, Owner: c.epoch, Lease: w.lease, Kind: markerCommit, mark: mark{t.Epoch, t.Checkpoint, part}, Parts: parts}
	// A second, time-bound layer: the server also refuses a part it committed within its
	// duplicate window.
	id := fmt.Sprintf("%s:%d:%d:%d", c.subject, t.Epoch, t.Checkpoint, part)
	return w.publish(ctx, c, msgs, mk, id, fmt.Sprintf("commit of checkpoint %d part %d of %d", t.Checkpoint, part, parts))
}

// publishEnd publishes msgs (a repartition writer's end frames) on the writer's own chain,
// in atomic batches of at most BatchSize messages, each ending in an end marker that moves
// the chain but not its mark: a zombie writer's end frames are refused as its commits are.
func (w *writer) publishEnd(ctx context.Context, msgs []*nats.Msg) error {
	c := w.own
	size := w.s.batchSize() - 1
	for from := 0; from < len(msgs); from += size {
		mk := marker{Job: w.s.Job, Subtask: c.subtask, Owner: c.epoch, Lease: w.lease, Kind: markerEnd, mark: c.done}
		id := fmt.Sprintf("%s:end:%d:%d", c.subject, c.epoch, c.last)
		if err := w.publish(ctx, c, msgs[from:min(from+size, len(msgs))], mk, id, "end of input"); err != nil {
			return err
		}
	}
	return nil
}

// publish publishes msgs and then marker mk (message id id) on chain c as one atomic
// batch, its first message expecting the chain's last sequence; what names the batch in
// errors. A publish that fails is judged by the chain: fenced by a newer owner, landed
// although its ack did not, or not landed (sent again, up to commitTries).
func (w *writer) publish(ctx context.Context, c *chain, msgs []*nats.Msg, mk marker, id, what string) error {
	mm := nats.NewMsg(c.subject)
	mm.Data, _ = json.Marshal(mk)
	mm.Header.Set(jetstream.MsgIDHeader, id)
	msgs = append(msgs, mm)
	msgs[0].Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, c.subject)
	msgs[0].Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(c.last, 10))
	for try := 1; ; try++ {
		ack, err := jetstreamext.PublishMsgBatch(ctx, w.js, msgs, jetstreamext.BatchFlowControl{AckFirst: false})
		if err == nil {
			w.advance(c, ack.Sequence, mk.mark)
			return nil
		}
		if batchTooLarge(err) {
			return restart.Permanent(fmt.Errorf("%s: %s to %s: the server refuses an atomic batch of %d messages%s: its limit, jetstream { limits { batch { max_msgs } } } in the server's configuration (1000 by default), is lower; lower the batch size or raise that limit on every server of the cluster: %w",
				w.what, what, w.s.Conn.servers(), len(msgs), keyHint(w.s.Keys, func(k *SinkKeys) string { return k.BatchSize }), err))
		}
		// Whether or not the server took the batch, the chain says what holds.
		seq, last, rerr := w.lastMarker(ctx, c.subject)
		if rerr != nil {
			return fmt.Errorf("%s: %s to %s: %w (and then: %w)", w.what, what, w.s.Conn.servers(), err, rerr)
		}
		switch {
		case last != nil && last.Owner > c.epoch:
			return restart.Permanent(fmt.Errorf("%s: fenced: marker subject %s of stream %q shows owner epoch %d, this writer's is %d: "+
				"a newer run of job %q has taken the output over, and this writer's %s is refused", w.what, c.subject, w.s.Stream, last.Owner, c.epoch, w.s.Job, what))
		case seq != c.last && last != nil && last.Owner == c.epoch && last.Kind == mk.Kind && last.mark == mk.mark:
			w.advance(c, seq, last.mark) // the batch went through; its ack did not
			return nil
		case seq != c.last:
			return restart.Permanent(fmt.Errorf("%s: marker subject %s of stream %q moved to sequence %d (this writer expected %d) without a marker of a newer owner: "+
				"something else publishes there", w.what, c.subject, w.s.Stream, seq, c.last))
		case wrongLastSequence(err) || duplicateMarker(err) || try >= commitTries:
			return fmt.Errorf("%s: %s to %s: %w", w.what, what, w.s.Conn.servers(), err)
		}
		time.Sleep(time.Duration(try) * 100 * time.Millisecond) // the chain is where it was: send again
	}
}

// advance moves chain c to its marker at sequence seq, which shows mark done.
func (w *writer) advance(c *chain, seq uint64, done mark) {
	w.mu.Lock()
	c.last, c.done = seq, done
	w.mu.Unlock()
}

// batchTooLarge reports whether the server refused a batch for holding more messages than
// its limit (err_code 10199).
func batchTooLarge(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == 10199
}
