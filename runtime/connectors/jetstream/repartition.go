package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/runtime/restart"
	"github.com/flowstate/flowstate/runtime/state"
)

// DefaultFrameBytes is the size a repartition writer fills a frame to when
// Repartition.FrameBytes is 0 (less when the server's max payload is smaller).
const DefaultFrameBytes = 64 << 10

// Repartition is one keyed exchange of a job that runs as tasks (Kafka Streams' model): the
// records of exchange k, written by the upstream tasks, go to P partitions of the job's
// repartition stream by key group, and the task of partition p of the keyed operator that
// follows reads them back. Use a *Repartition.
//
// Subjects of the job's repartition stream S (RepartitionSubjects): the records of
// exchange k for partition p on flowstate.S.data.<k>.<p> (Subject), and the marker chain
// of upstream task t on flowstate.S.markers.<job>.x<k>.<t>.
//
// Writing (Sink): each upstream task has a writer of its own, the exactly-once Sink as an
// independent writer on its own marker chain, so that tasks start, restore and are fenced
// on their own. A record goes to the partition whose key-group range
// (state.KeyGroupRangeFor) holds its key's group; the writer packs the encoded records of
// a partition, length-prefixed, into a frame of up to FrameBytes, which it hands to the
// Sink as one message: JetStream costs per message, so a frame carries many records. Full
// frames go at once, the others at each checkpoint's PreCommit, so a checkpoint's sink
// state holds every record of its interval.
//
// End of input: when the task's input ends (dataflow.Flusher's Flush, after its last
// commit), the writer publishes an end frame on every partition, as an atomic batch on its
// marker chain, so a zombie writer cannot publish one. A writer has ended, for a reader,
// when the last frame the reader has read from it is an end frame and the writer's chain
// shows no run after the one that published it: a writer that opens again (a restored or
// resumed task) has not ended until it publishes another end frame, and what it writes
// before that is read. A reader counts distinct ended writers, so an end frame published
// twice (a crash between the last commit and Flush, and a restore) does no harm. The
// reader returns io.EOF once every one of its writers has ended: by then it has emitted
// every data frame published before their end frames.
type Repartition struct {
	// Conn is where the job's repartition stream is.
	Conn Conn
	// Stream is the job's repartition stream (EnsureRepartitionStream).
	Stream string
	// Job is the job's name.
	Job string
	// Exchange is k >= 1: exchange k feeds the keyed operator of sub-topology k.
	Exchange int
	// Partitions is P: partition p holds the key groups of
	// state.KeyGroupRangeFor(MaxParallelism, P, p).
	Partitions int
	// MaxParallelism is the job's number of key groups.
	MaxParallelism int
	// Key is the exchange's key selector (for writers).
	Key func(rec any) []byte
	// Encode appends a record's encoding to b (for writers).
	Encode func(b []byte, rec any) ([]byte, error)
	// Decode reads a record Encode wrote (for readers).
	Decode func(b []byte) (any, error)
	// BatchSize is the most messages an atomic batch holds, its marker included
	// (DefaultBatchSize when 0).
	BatchSize int
	// FrameBytes is the size a writer fills a frame to (DefaultFrameBytes when 0); it
	// must leave room under the server's max payload for the subject and headers.
	FrameBytes int
	// Epoch, if set, returns the fencing token of the task's lease (Sink.Epoch): recorded
	// in the writer's markers.
	Epoch func() int64
	// Logger receives what the writers' restores skip and commit (nil: none).
	Logger hclog.Logger

	// failAfterParts makes writers fail after committing that many parts (tests).
	failAfterParts int
}

func (r *Repartition) what() string {
	return fmt.Sprintf("repartition exchange %d of job %q (stream %q)", r.Exchange, r.Job, r.Stream)
}

// Check reports what is wrong with the settings, without connecting.
func (r *Repartition) Check() error {
	if err := r.Conn.Check(); err != nil {
		return fmt.Errorf("%s: %w", r.what(), err)
	}
	if err := checkStreamName(r.Stream); err != nil {
		return fmt.Errorf("%s: %w", r.what(), err)
	}
	switch {
	case r.Job == "":
		return fmt.Errorf("%s: no job name", r.what())
	case r.Exchange < 1:
		return fmt.Errorf("%s: exchange %d: exchanges count from 1", r.what(), r.Exchange)
	case r.Partitions < 1 || r.Partitions > r.MaxParallelism:
		return fmt.Errorf("%s: %d partitions with max parallelism %d: want 1 to the max parallelism", r.what(), r.Partitions, r.MaxParallelism)
	case r.BatchSize != 0 && r.BatchSize < 2:
		return fmt.Errorf("%s: batch size %d: a batch needs room for a frame and its marker, at least 2", r.what(), r.BatchSize)
	case r.FrameBytes < 0:
		return fmt.Errorf("%s: frame size %d bytes", r.what(), r.FrameBytes)
	}
	if err := checkSubject(r.markerPrefix() + "." + r.chainJob() + ".0"); err != nil {
		return fmt.Errorf("%s: job name %q: %w", r.what(), r.Job, err)
	}
	return nil
}

// checkStreamName reports why name cannot be a stream's name.
func checkStreamName(name string) error {
	switch {
	case name == "":
		return errors.New("no stream given")
	case strings.ContainsAny(name, ".*> \t\r\n/\\"):
		return fmt.Errorf("stream name %q: a stream's name holds no '.', '*', '>', '/', '\\' or white space", name)
	}
	return nil
}

// Subject returns the subject of partition p's records.
func (r *Repartition) Subject(p int) string {
	return "flowstate." + r.Stream + ".data." + strconv.Itoa(r.Exchange) + "." + strconv.Itoa(p)
}

// markerPrefix starts the subjects of the writers' marker chains.
func (r *Repartition) markerPrefix() string { return "flowstate." + r.Stream + ".markers" }

// chainJob is the job name of the writers' marker chains: the job and the exchange.
func (r *Repartition) chainJob() string { return r.Job + ".x" + strconv.Itoa(r.Exchange) }

// partition returns the partition of a record's key: the operator index of its key group.
func (r *Repartition) partition(key []byte) int {
	return state.SubtaskForKeyGroup(r.MaxParallelism, r.Partitions, state.KeyGroupFor(key, r.MaxParallelism))
}

// sink is the exactly-once sink the writers are: each upstream task an independent
// writer of its own chain, whose records are frames (a frameMsg each).
func (r *Repartition) sink() *Sink {
	return &Sink{Conn: r.Conn, Stream: r.Stream, Subject: "flowstate." + r.Stream + ".data." + strconv.Itoa(r.Exchange) + "." + KeyPlaceholder,
		MarkerPrefix: r.markerPrefix(), BatchSize: r.BatchSize, Job: r.chainJob(), Format: formatFrame, Logger: r.Logger,
		Independent: true, Epoch: r.Epoch, failAfterParts: r.failAfterParts}
}

// RepartitionSubjects returns the subjects a job's repartition stream captures: its data
// subjects and its marker subjects.
func RepartitionSubjects(stream string) []string {
	return []string{"flowstate." + stream + ".data.>", "flowstate." + stream + ".markers.>"}
}

// EnsureRepartitionStream creates a job's repartition stream (file storage, replicas
// replicas, atomic batch publish allowed, RepartitionSubjects, no limits), or checks the
// one there: a stream whose settings disagree is refused for good, naming the stream and
// the setting, since the exchanges would lose exactly-once or data with it.
func EnsureRepartitionStream(ctx context.Context, c Conn, stream string, replicas int) error {
	what := fmt.Sprintf("repartition stream %q", stream)
	if err := checkStreamName(stream); err != nil {
		return restart.Permanent(fmt.Errorf("%s: %w", what, err))
	}
	if replicas < 1 {
		return restart.Permanent(fmt.Errorf("%s: %d replicas: want at least 1", what, replicas))
	}
	nc, js, err := c.connect(ctx, what)
	if err != nil {
		return err
	}
	defer nc.Close()
	cfg := jetstream.StreamConfig{Name: stream, Subjects: RepartitionSubjects(stream), Replicas: replicas, Storage: jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy, AllowAtomicPublish: true}
	// Look first: the server would refuse the creation of a stream a single node cannot
	// replicate before it says the stream is there.
	st, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		st, err = js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) { // another runner created it
			st, err = js.Stream(ctx, stream)
		}
	}
	if err != nil {
		return fmt.Errorf("%s on %s: %w", what, nc.ConnectedUrlRedacted(), err)
	}
	info := st.CachedInfo()
	if info == nil {
		if info, err = st.Info(ctx); err != nil {
			return fmt.Errorf("%s on %s: %w", what, nc.ConnectedUrlRedacted(), err)
		}
	}
	if err := checkRepartitionStream(info, replicas); err != nil {
		return restart.Permanent(fmt.Errorf("%s on %s: %w", what, nc.ConnectedUrlRedacted(), err))
	}
	return nil
}

// RepartitionStreamFrames returns how many messages a job's repartition stream holds (0
// when it is missing).
func RepartitionStreamFrames(ctx context.Context, c Conn, stream string) (uint64, error) {
	what := fmt.Sprintf("repartition stream %q", stream)
	nc, js, err := c.connect(ctx, what)
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	st, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%s on %s: %w", what, nc.ConnectedUrlRedacted(), err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s on %s: %w", what, nc.ConnectedUrlRedacted(), err)
	}
	return info.State.Msgs, nil
}

// checkRepartitionStream reports the first setting of the stream info shows that a
// repartition stream of replicas replicas must not have.
func checkRepartitionStream(info *jetstream.StreamInfo, replicas int) error {
	c := info.Config
	for _, subj := range RepartitionSubjects(c.Name) {
		probe := strings.TrimSuffix(subj, ">") + "0.0"
		if !captured(info, probe) {
			return fmt.Errorf("subjects %s: it does not capture %s", strings.Join(c.Subjects, ", "), subj)
		}
	}
	switch {
	case !c.AllowAtomicPublish:
		return fmt.Errorf("allow_atomic is off: the exchanges commit atomic batches (nats stream edit %s --allow-batch)", c.Name)
	case c.Replicas != replicas:
		return fmt.Errorf("replicas %d: the job asks for %d", c.Replicas, replicas)
	case c.Storage != jetstream.FileStorage:
		return fmt.Errorf("storage %s: a repartition stream keeps its data on file", c.Storage)
	case c.Retention != jetstream.LimitsPolicy:
		return fmt.Errorf("retention %s: a repartition stream's messages stay until the job drops them (limits retention)", c.Retention)
	case c.MaxAge > 0 || c.MaxMsgs > 0 || c.MaxBytes > 0 || c.MaxMsgsPerSubject > 0:
		return fmt.Errorf("limits (max age %s, max messages %d, max bytes %d, max messages per subject %d): they would drop frames and markers the tasks still need",
			c.MaxAge, c.MaxMsgs, c.MaxBytes, c.MaxMsgsPerSubject)
	}
	return nil
}
