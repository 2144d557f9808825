package dataflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowstate/flowstate/runtime/state"
)

// Source reads a replayable input. Each subtask opens its own reader.
type Source interface {
	// Open starts subtask subtask of parallelism at the position saved in pos (nil: the
	// beginning).
	Open(ctx context.Context, subtask, parallelism int, pos []byte) (SourceReader, error)
}

// SourceReader is one subtask's reader.
type SourceReader interface {
	// Read emits up to max records and returns io.EOF once the subtask's input is done.
	Read(ctx context.Context, max int, emit func(any)) error
	// Position returns the position after the last record emitted.
	Position() ([]byte, error)
	// Close releases the reader.
	Close() error
}

// DrainToEnd is implemented by a SourceReader whose input ends on its own once what feeds
// it has ended, such as the reader of a distributed job's exchange, which ends once every
// task writing into it has ended. When DrainToEnd returns true, a drain (`runner stop
// --drain`) reads it on until io.EOF instead of ending its input where it is, so that
// everything the tasks before it emitted is processed and committed.
type DrainToEnd interface {
	DrainToEnd() bool
}

// Sink writes a job's output transactionally.
type Sink interface {
	// Open starts subtask subtask of parallelism. state is what PreCommit returned in the
	// checkpoint being restored (nil for a fresh start): its transactions are committed,
	// and anything written after it is discarded.
	Open(ctx context.Context, subtask, parallelism int, state []byte) (SinkWriter, error)
}

// SinkWriter is one subtask's writer.
type SinkWriter interface {
	// Write writes a record into the current transaction.
	Write(rec any) error
	// PreCommit closes the current transaction as part of checkpoint id and returns the
	// sink state to store in that checkpoint.
	PreCommit(checkpointID int64) ([]byte, error)
	// Commit makes visible the transactions of every checkpoint up to id.
	Commit(checkpointID int64) error
	// Aborted says checkpoint id will never complete. Its pre-committed transaction stays
	// pending: the next completed checkpoint's Commit covers it.
	Aborted(checkpointID int64) error
	// Close releases the writer; uncommitted transactions stay pending.
	Close() error
}

// Flusher is a SinkWriter whose Commit may return before the transactions are visible
// (a commit in the background, while the subtask goes on writing). Flush waits until
// every commit asked for is done and returns the error of any that failed; the run
// calls it when the subtask's input has ended, after its last Commit, so that a job
// finishes only once its output is visible. Such a writer's next Commit returns the
// error of a failed earlier one, and a commit lost to a crash must be safe to redo from
// the checkpoint's sink state.
type Flusher interface {
	Flush() error
}

// Job is a dataflow graph.
type Job struct {
	// Name names the job; checkpoints are kept under it.
	Name string
	// Type names what the job computes (job.type of a built-in job, "" by default). Its
	// checkpoints record it, and a job of another type refuses to restore them.
	Type string
	// Parallelism is the number of subtasks of every stage.
	Parallelism int
	// MaxParallelism is the number of key groups.
	MaxParallelism int
	// BatchSize is the number of records a source reads per batch.
	BatchSize int
	// Rate limits the records per second all source subtasks emit together (0: no limit).
	Rate float64

	source   Source
	sourceID string
	stages   []*stage
	sink     Sink
	errs     []error
}

// A stage's functions are bound to where they emit once per subtask (bind, chain), so
// that processing a record allocates no closure to adapt the typed emit of the user's
// function to the records' untyped one.
type stage struct {
	id     string
	keyOf  func(any) []byte // key selector of the KeyBy heading this stage (nil for stage 0)
	codec  *codec           // the encoding of the records of that KeyBy (nil for stage 0)
	states []state.Descriptor
	bind   func(emit func(any)) func(kc *KeyedContext, rec any) error
	chain  []link
}

// link is a stateless transformation of a stage: given where it emits, the function that
// takes each record.
type link func(emit func(any)) func(rec any) error

// NewJob starts a job graph.
func NewJob(name string) *Job {
	return &Job{Name: name, Parallelism: 1, MaxParallelism: state.DefaultMaxParallelism, BatchSize: 1024}
}

// Stream is a stream of records of type T in a job under construction.
type Stream[T any] struct{ job *Job }

// KeyedStream is a stream partitioned by key.
type KeyedStream[T any] struct {
	job   *Job
	keyOf func(any) []byte
	codec *codec
}

// KeyedContext is what a keyed function sees besides the record: its key and its state.
type KeyedContext struct {
	store *state.Store
}

// Key returns the current record's key.
func (kc *KeyedContext) Key() []byte { return kc.store.CurrentKey() }

// State returns the store the job's state descriptors read and write.
func (kc *KeyedContext) State() *state.Store { return kc.store }

// FromSource starts job's graph at src. A job has exactly one source.
func FromSource[T any](job *Job, id string, src Source) *Stream[T] {
	if job.source != nil {
		job.errs = append(job.errs, fmt.Errorf("source %q: the job already has source %q", id, job.sourceID))
	}
	job.source, job.sourceID = src, id
	job.stages = []*stage{{id: id}}
	return &Stream[T]{job}
}

func (s *Stream[T]) last() *stage { return s.job.stages[len(s.job.stages)-1] }

// Map transforms each record.
func Map[I, O any](s *Stream[I], fn func(I) O) *Stream[O] {
	st := s.last()
	st.chain = append(st.chain, func(emit func(any)) func(any) error {
		return func(rec any) error {
			emit(fn(rec.(I)))
			return nil
		}
	})
	return &Stream[O]{s.job}
}

// FlatMap turns each record into zero or more.
func FlatMap[I, O any](s *Stream[I], fn func(I, func(O))) *Stream[O] {
	st := s.last()
	st.chain = append(st.chain, func(emit func(any)) func(any) error {
		typed := func(o O) { emit(o) }
		return func(rec any) error {
			fn(rec.(I), typed)
			return nil
		}
	})
	return &Stream[O]{s.job}
}

// Filter keeps the records for which keep returns true.
func Filter[T any](s *Stream[T], keep func(T) bool) *Stream[T] {
	st := s.last()
	st.chain = append(st.chain, func(emit func(any)) func(any) error {
		return func(rec any) error {
			if keep(rec.(T)) {
				emit(rec)
			}
			return nil
		}
	})
	return s
}

// KeyBy partitions the stream by key: records with equal keys go to the same subtask, in
// order.
func KeyBy[T any](s *Stream[T], key func(T) []byte) *KeyedStream[T] {
	return &KeyedStream[T]{job: s.job, keyOf: func(rec any) []byte { return key(rec.(T)) }, codec: defaultCodec[T]()}
}

// Process applies a keyed function with state. id names the operator (its state is saved
// under it); states declares every state the function uses, so each micro-batch reads
// them for all its keys in one call.
func Process[T, O any](ks *KeyedStream[T], id string, states []state.Descriptor, fn func(kc *KeyedContext, rec T, emit func(O)) error) *Stream[O] {
	for _, st := range ks.job.stages {
		if st.id == id {
			ks.job.errs = append(ks.job.errs, fmt.Errorf("operator id %q used twice", id))
		}
	}
	ks.job.stages = append(ks.job.stages, &stage{
		id:     id,
		keyOf:  ks.keyOf,
		codec:  ks.codec,
		states: states,
		bind: func(emit func(any)) func(*KeyedContext, any) error {
			typed := func(o O) { emit(o) }
			return func(kc *KeyedContext, rec any) error { return fn(kc, rec.(T), typed) }
		},
	})
	return &Stream[O]{ks.job}
}

// SinkTo ends the graph in sink.
func SinkTo[T any](s *Stream[T], sink Sink) {
	if s.job.sink != nil {
		s.job.errs = append(s.job.errs, errors.New("the job already has a sink"))
	}
	s.job.sink = sink
}

// OutputDir returns the directory the job's sink writes into, as the sink says with a
// method OutputDir() string (connectors.FileSink has one); "" when it does not.
func (j *Job) OutputDir() string {
	if s, ok := j.sink.(interface{ OutputDir() string }); ok {
		return s.OutputDir()
	}
	return ""
}

// SinkID is the operator id of a job's sink.
const SinkID = "sink"

// Validate reports what is wrong with the graph.
func (j *Job) Validate() error {
	errs := append([]error(nil), j.errs...)
	if j.Name == "" {
		errs = append(errs, errors.New("job name is empty"))
	}
	if j.source == nil {
		errs = append(errs, errors.New("job has no source"))
	}
	if j.sink == nil {
		errs = append(errs, errors.New("job has no sink"))
	}
	if j.Parallelism < 1 {
		errs = append(errs, fmt.Errorf("parallelism %d: must be at least 1", j.Parallelism))
	}
	if j.MaxParallelism < j.Parallelism || j.MaxParallelism > 1<<15 {
		errs = append(errs, fmt.Errorf("max parallelism %d: must be between the parallelism (%d) and 32768", j.MaxParallelism, j.Parallelism))
	}
	if j.BatchSize < 1 {
		errs = append(errs, fmt.Errorf("batch size %d: must be at least 1", j.BatchSize))
	}
	return errors.Join(errs...)
}
