package jetstream

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// Measure implements dataflow.Measured: the reader reports each split's pending records
// (the split subject's last stream sequence minus the last sequence done) every
// lagInterval, and the emit event-time lag (now minus the stream timestamp of the last
// message emitted) on each Read after one that emitted.
func (r *reader) Measure(ev dataflow.ConnectorEvents) { r.ev = ev }

// lagProbe asks the stream for the last sequences of a reader's splits in the
// background, so that a slow answer never holds a Read up.
type lagProbe struct {
	asked  time.Time
	busy   bool
	result chan map[string]uint64
	ctx    context.Context
	cancel context.CancelFunc
}

func (p *lagProbe) close() {
	if p.cancel != nil {
		p.cancel()
	}
}

// measure reports the emit lag of what the last Read emitted and, once a probe of the
// splits' last sequences has answered, their pending records; it starts a probe every
// lagInterval.
func (r *reader) measure() {
	if r.ev == nil {
		return
	}
	if !r.lastTime.IsZero() {
		r.ev.EmitEventTimeLag(time.Since(r.lastTime))
		r.lastTime = time.Time{}
	}
	p := &r.lag
	if p.busy {
		select {
		case last := <-p.result:
			p.busy = false
			r.reportPending(last)
		default:
			return
		}
	}
	if time.Since(p.asked) < lagInterval {
		return
	}
	if p.ctx == nil {
		p.ctx, p.cancel = context.WithCancel(context.Background())
		p.result = make(chan map[string]uint64, 1)
	}
	var subjects []string // nil: list those of the filters
	if !r.all() {
		subjects = make([]string, 0, len(r.covers))
		for subj := range r.covers {
			subjects = append(subjects, subj)
		}
	}
	p.asked, p.busy = time.Now(), true
	go r.probe(p.ctx, subjects, p.result)
}

// probe sends the last stream sequence of each of subjects (nil: of every subject the
// filters match) to result; a subject without a message has 0. A probe that fails sends
// what it found before: the lag is reported again at the next one.
func (r *reader) probe(ctx context.Context, subjects []string, result chan<- map[string]uint64) {
	ctx, cancel := context.WithTimeout(ctx, lagInterval)
	defer cancel()
	last := map[string]uint64{}
	defer func() { result <- last }()
	if subjects == nil {
		var err error
		if subjects, _, err = r.list(ctx); err != nil {
			return
		}
	}
	slices.Sort(subjects)
	for _, subj := range subjects {
		m, err := r.st.GetLastMsgForSubject(ctx, subj)
		switch {
		case err == nil:
			last[subj] = m.Sequence
		case errors.Is(err, jetstream.ErrMsgNotFound):
			last[subj] = 0
		default:
			return
		}
	}
}

// reportPending reports every split's pending records from the splits' last sequences.
func (r *reader) reportPending(last map[string]uint64) {
	for subj, seq := range last {
		r.ev.SplitPending(subj, int64(seq-min(seq, r.doneThrough(subj))))
	}
}

// doneThrough returns the sequence up to which subject is done: its cover, or what the
// consumer delivered when that is further (every subject of its filter is done up to it).
func (r *reader) doneThrough(subj string) uint64 {
	done := r.others
	c, ok := r.covers[subj]
	if ok {
		done = *c
	}
	if r.cons != nil && (r.all() || ok) {
		done = max(done, r.through)
	}
	return done
}
