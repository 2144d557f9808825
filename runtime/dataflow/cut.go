package dataflow

import (
	"context"
	"errors"
	"fmt"
)

// Topology is a job cut at its keyed exchanges, so that any number of runners can run it
// together (distributed mode), the way Kafka Streams runs a topology: sub-topology 0 is
// the source and the stateless chain behind it; sub-topology k, for 1 <= k <
// SubTopologies, is the keyed operator of the job's k-th KeyBy with the chain behind it;
// the last one ends in the job's sink. Exchange k joins sub-topology k-1 to k: in
// distributed mode a repartition stream whose partition p holds the key groups of subtask
// p of the job's parallelism (state.KeyGroupRangeFor). Every sub-topology runs as
// Parallelism tasks, task p handling partition p; a task is a job of its own (Task), with
// its own checkpoints, restored on its own, on whichever runner holds it.
type Topology struct {
	job *Job
}

// Cut cuts job at its keyed exchanges. It refuses a job that cannot run as tasks: one
// whose exchanges carry records without an encoding (see WithCodec), or whose sink
// rewinds its output (Rewinder) but cannot rewind one subtask's alone (SubtaskRewinder).
func (j *Job) Cut() (*Topology, error) {
	if err := j.Validate(); err != nil {
		return nil, fmt.Errorf("job %q: %w", j.Name, err)
	}
	var errs []error
	if len(j.stages) < 2 {
		errs = append(errs, errors.New("a job needs at least one KeyBy before its sink"))
	}
	ids := map[string]bool{j.sourceID: true}
	for _, st := range j.stages[min(1, len(j.stages)):] {
		ids[st.id] = true
		if err := st.codec.check(st.id); err != nil {
			errs = append(errs, err)
		}
	}
	for k := 1; k < len(j.stages); k++ {
		if x := ExchangeID(k); ids[x] {
			errs = append(errs, fmt.Errorf("operator id %q: distributed mode names the reader of the job's exchange %d so; give the operator another id", x, k))
		}
	}
	if _, ok := j.sink.(Rewinder); ok {
		if _, ok := j.sink.(SubtaskRewinder); !ok {
			errs = append(errs, fmt.Errorf("sink %T rewinds its output (dataflow.Rewinder) but cannot rewind one subtask's alone (dataflow.SubtaskRewinder), which each task of a distributed job needs", j.sink))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("job %q cannot run on many runners: %w", j.Name, err)
	}
	return &Topology{job: j}, nil
}

// ExchangeID is the operator id, in the tasks of a distributed job, of the reader of
// exchange k (the source of sub-topology k's tasks) and of the operator that hands the
// records of sub-topology 0 to it.
func ExchangeID(k int) string { return fmt.Sprintf("exchange-%d", k) }

// Job returns the job that was cut.
func (t *Topology) Job() *Job { return t.job }

// SubTopologies returns the number of sub-topologies: one more than the job's KeyBys.
func (t *Topology) SubTopologies() int { return len(t.job.stages) }

// Head returns the id of the operator that heads sub-topology k: the source's for 0, else
// the keyed operator's. Tasks are named after it.
func (t *Topology) Head(k int) string { return t.job.stages[k].id }

// Exchange describes what exchange k carries into sub-topology k's keyed operator.
type Exchange struct {
	// Operator is the keyed operator the exchange feeds.
	Operator string
	// Key is the KeyBy's key selector.
	Key func(rec any) []byte
	// Encode appends a record's bytes to b; Decode returns the record of bytes Encode
	// wrote, without keeping b.
	Encode func(b []byte, rec any) ([]byte, error)
	Decode func(b []byte) (any, error)
}

// Exchange returns exchange k, for 1 <= k < SubTopologies.
func (t *Topology) Exchange(k int) Exchange {
	st := t.job.stages[k]
	return Exchange{Operator: st.id, Key: st.keyOf, Encode: st.codec.encode, Decode: st.codec.decode}
}

// Task returns the job of task p of sub-topology k, named name: a job of parallelism 1
// whose checkpoints are the task's own. Sub-topology 0's task reads subtask p (of the
// job's parallelism) of the job's source; any other reads in, the source of exchange k's
// partition p. The last sub-topology's task writes subtask p of the job's sink; any other
// writes into out, the sink of exchange k+1. A task of sub-topology 0 reads at its share
// of the job's rate.
func (t *Topology) Task(name string, k, p int, in Source, out Sink) *Job {
	j := t.job
	task := &Job{Name: name, Type: j.Type, Parallelism: 1, MaxParallelism: j.MaxParallelism, BatchSize: j.BatchSize}
	parts := j.Parallelism
	last := len(j.stages) - 1
	if k == 0 {
		task.Rate = j.Rate / float64(parts)
		task.source, task.sourceID = partSource{j.source, p, parts}, j.sourceID
		next := j.stages[1]
		pass := &stage{id: ExchangeID(1), keyOf: next.keyOf, bind: func(emit func(any)) func(*KeyedContext, any) error {
			return func(_ *KeyedContext, rec any) error {
				emit(rec)
				return nil
			}
		}}
		task.stages = []*stage{j.stages[0], pass}
	} else {
		task.source, task.sourceID = in, ExchangeID(k)
		task.stages = []*stage{{id: ExchangeID(k)}, j.stages[k]}
	}
	if k == last {
		task.sink = partSink{j.sink, p, parts}
	} else {
		task.sink = out
	}
	return task
}

// partSource opens subtask p of parallelism parts of a source, for the task of a
// distributed job that reads that share of the input as a job of parallelism 1.
type partSource struct {
	src      Source
	p, parts int
}

// Open implements Source.
func (s partSource) Open(ctx context.Context, subtask, parallelism int, pos []byte) (SourceReader, error) {
	if subtask != 0 || parallelism != 1 {
		return nil, fmt.Errorf("source of task %d: opened as subtask %d of %d, not as the one subtask of its task", s.p, subtask, parallelism)
	}
	return s.src.Open(ctx, s.p, s.parts, pos)
}

// Preflight implements Preflighter when the source does.
func (s partSource) Preflight(ctx context.Context) error { return preflight(ctx, s.src) }

func (s partSource) unwrap() any { return s.src }

// partSink opens subtask p of parallelism parts of a sink (see partSource).
type partSink struct {
	sink     Sink
	p, parts int
}

// Open implements Sink.
func (s partSink) Open(ctx context.Context, subtask, parallelism int, state []byte) (SinkWriter, error) {
	if subtask != 0 || parallelism != 1 {
		return nil, fmt.Errorf("sink of task %d: opened as subtask %d of %d, not as the one subtask of its task", s.p, subtask, parallelism)
	}
	return s.sink.Open(ctx, s.p, s.parts, state)
}

// Preflight implements Preflighter when the sink does.
func (s partSink) Preflight(ctx context.Context) error { return preflight(ctx, s.sink) }

// RewindTo implements Rewinder: the task rewinds the output of its own subtask alone
// (Cut refuses a Rewinder sink that cannot).
func (s partSink) RewindTo(ctx context.Context, id int64) (int, string, error) {
	if r, ok := s.sink.(SubtaskRewinder); ok {
		return r.RewindSubtaskTo(ctx, s.p, id)
	}
	return 0, "", nil
}

func (s partSink) unwrap() any { return s.sink }

func preflight(ctx context.Context, c any) error {
	if p, ok := c.(Preflighter); ok {
		return p.Preflight(ctx)
	}
	return nil
}

// SubtaskRewinder is a Rewinder that can rewind the output of one subtask alone: each task
// of a distributed job restores its own checkpoints, and rewinds only what it committed.
type SubtaskRewinder interface {
	// RewindSubtaskTo moves aside the output subtask committed after checkpoint id (see
	// Rewinder.RewindTo), leaving every other subtask's alone.
	RewindSubtaskTo(ctx context.Context, subtask int, id int64) (moved int, where string, err error)
}

// unwrapped returns the source or sink c wraps, or c.
func unwrapped(c any) any {
	for {
		w, ok := c.(interface{ unwrap() any })
		if !ok {
			return c
		}
		c = w.unwrap()
	}
}
