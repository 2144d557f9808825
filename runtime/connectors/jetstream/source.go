package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/restart"
)

// Startup modes of a source: where a run that restores no position starts reading.
const (
	// StartEarliest reads from the stream's first message.
	StartEarliest = "earliest"
	// StartLatest reads what is published after the run starts.
	StartLatest = "latest"
	// StartTimestamp reads from the first message stored at or after Source.StartTime.
	StartTimestamp = "timestamp"
	// StartSequence reads from stream sequence Source.StartSequence.
	StartSequence = "sequence"
)

// Defaults of a source.
const (
	// DefaultDiscoveryInterval is how often a source looks for new partition subjects.
	DefaultDiscoveryInterval = 10 * time.Second
	// idleWait is how long a Read waits for a first message before it returns none, so
	// that the subtask serves checkpoint barriers while the stream is quiet.
	idleWait = 50 * time.Millisecond
	// disconnectedLimit is how long a reader tolerates its connection down (a server
	// killed or frozen) before it fails the attempt; the restart strategy takes over.
	disconnectedLimit = 30 * time.Second
	// pullBatch is how many messages a reader's ordered consumer asks for at a time.
	pullBatch = 1024
	// lagInterval is how often a measured reader asks the stream for its splits' last
	// sequences, to report their pending records.
	lagInterval = 5 * time.Second
)

// Source reads the messages of a JetStream stream, exactly once with the engine's
// checkpoints. A split is one partition subject: a distinct subject of the stream that the
// filters (Subjects) match. Subtask i of p reads the subjects whose FNV-1a hash is i mod p,
// so every subtask knows its own splits. Its position, kept in checkpoints, is the stream's
// name and creation time (a stream deleted and created again under the name is refused),
// and for each subject the last stream sequence done; a restored subtask reads on from the
// next one, with an ordered consumer (no acknowledgements: they play no part in recovery).
// With another parallelism the positions are redistributed (Redistribute). New subjects are
// looked for every DiscoveryInterval. Use a *Source: one value is one run, and its subtasks
// share where the run started.
type Source struct {
	// Conn is where the stream is.
	Conn Conn
	// Stream is the stream's name.
	Stream string
	// Subjects are the subject filters (wildcards allowed); none reads every subject.
	Subjects []string
	// StartMode is where a subtask with no position starts: StartEarliest (the default,
	// for ""), StartLatest, StartTimestamp or StartSequence.
	StartMode string
	// StartTime is the time of StartTimestamp.
	StartTime time.Time
	// StartSequence is the stream sequence of StartSequence.
	StartSequence uint64
	// Bounded stops each subtask once it has read every message its subjects had when
	// the run started (the stream's last sequence then), for backfills and tests;
	// unbounded, the source reads for as long as the job runs.
	Bounded bool
	// DiscoveryInterval is how often new partition subjects are looked for
	// (DefaultDiscoveryInterval when 0).
	DiscoveryInterval time.Duration
	// SkipDecodeErrors skips (and counts, see Skipped) a message that does not decode
	// instead of failing the job, whose error names the stream and the sequence.
	SkipDecodeErrors bool
	// SkipRetentionGaps lets a subtask go on when the stream no longer has messages its
	// position still needs (its retention dropped them): it reads on from the stream's
	// first message and logs what it skipped. By default such a restore is refused.
	SkipRetentionGaps bool
	// Decode turns a message into a record. Nil reads the payload as UTF-8 text (a
	// string); invalid UTF-8 does not decode.
	Decode func(subject string, data []byte) (any, error)
	// Unpack, set instead of Decode, reads a message that holds many records (a
	// Repartition's frame): it emits the message's records, all or none, and returns how
	// many. A Read then emits up to max records and finishes the message the max falls
	// in, so it may emit more than max (up to a message's records less one); a position
	// stays a message boundary.
	Unpack func(subject string, data []byte, emit func(any)) (int, error)
	// Keys name the configuration keys the settings come from, for errors (nil: none).
	Keys *SourceKeys
	// Logger receives the skipped messages and gaps (nil: none).
	Logger hclog.Logger

	mu      sync.Mutex
	run     *runStart
	skipped atomic.Int64
}

// SourceKeys name the configuration keys a Source's settings come from.
type SourceKeys struct {
	Stream, Subjects, OnDecodeError, OnRetentionGap string
}

// runStart is what the subtasks of one run share: the stream as the run found it.
type runStart struct {
	created time.Time
	start   uint64 // the first sequence a subtask with no position reads
	bound   uint64 // Bounded: the stream's last sequence when the run started
}

// position is a source subtask's position: the stream and, for each of its subjects, the
// sequence up to which every message of the subject is done (emitted, or before where the
// run started). Others holds the same for the subjects it does not list.
type position struct {
	Stream   string            `json:"stream"`
	Created  time.Time         `json:"created"`
	Others   uint64            `json:"others"`
	Subjects map[string]uint64 `json:"subjects"`
}

// Skipped returns how many messages that did not decode the source's subtasks skipped.
func (s *Source) Skipped() int64 { return s.skipped.Load() }

func (s *Source) what() string { return fmt.Sprintf("jetstream source (stream %q)", s.Stream) }

func (s *Source) interval() time.Duration {
	if s.DiscoveryInterval > 0 {
		return s.DiscoveryInterval
	}
	return DefaultDiscoveryInterval
}

// Check reports what is wrong with the settings, without connecting.
func (s *Source) Check() error {
	if err := s.Conn.Check(); err != nil {
		return fmt.Errorf("%s: %w", s.what(), err)
	}
	if s.Stream == "" {
		return fmt.Errorf("jetstream source: no stream given%s", keyHint(s.Keys, func(k *SourceKeys) string { return k.Stream }))
	}
	if s.Decode != nil && s.Unpack != nil {
		return fmt.Errorf("%s: Decode and Unpack are both set: a message is read one way", s.what())
	}
	switch s.StartMode {
	case "", StartEarliest, StartLatest:
	case StartTimestamp:
		if s.StartTime.IsZero() {
			return fmt.Errorf("%s: startup mode timestamp needs a time", s.what())
		}
	case StartSequence:
		if s.StartSequence == 0 {
			return fmt.Errorf("%s: startup mode sequence needs a sequence of at least 1", s.what())
		}
	default:
		return fmt.Errorf("%s: unknown startup mode %q (want earliest, latest, timestamp or sequence)", s.what(), s.StartMode)
	}
	return nil
}

// checkFilters refuses, for good, a subject filter that no subject the stream captures
// can match: it reads nothing now or ever (the server refuses such a consumer filter too),
// which a typo in the filter would otherwise make a run that ends with no records. A
// stream that takes its messages from elsewhere (a mirror, sources, a subject transform)
// stores subjects its own do not say, and is not checked.
func (s *Source) checkFilters(info *jetstream.StreamInfo, server string) error {
	c := info.Config
	if len(c.Subjects) == 0 || c.Mirror != nil || len(c.Sources) > 0 || c.SubjectTransform != nil {
		return nil
	}
	for _, f := range s.Subjects {
		if !slices.ContainsFunc(c.Subjects, func(sub string) bool { return subjectsOverlap(f, sub) }) {
			return restart.Permanent(fmt.Errorf("%s: subject filter %q%s matches no subject stream %q on %s captures (its subjects: %s): it would read nothing",
				s.what(), f, keyHint(s.Keys, func(k *SourceKeys) string { return k.Subjects }), s.Stream, server, strings.Join(c.Subjects, ", ")))
		}
	}
	return nil
}

// subjectsOverlap reports whether some subject matches both NATS subject filters a and b.
func subjectsOverlap(a, b string) bool {
	at, bt := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(at) && i < len(bt); i++ {
		switch x, y := at[i], bt[i]; {
		case x == ">" || y == ">":
			return true
		case x != "*" && y != "*" && x != y:
			return false
		}
	}
	return len(at) == len(bt)
}

func keyHint[K any](keys *K, key func(*K) string) string {
	if keys == nil || key(keys) == "" {
		return ""
	}
	return " (" + key(keys) + ")"
}

// Preflight implements dataflow.Preflighter: the settings must hold and, when a server
// answers, the stream must exist. A server that cannot be reached is left for the
// subtasks to report, so that the restart strategy governs the retries.
func (s *Source) Preflight(ctx context.Context) error {
	if err := s.Check(); err != nil {
		return err
	}
	return s.Conn.preflight(ctx, s.what(), s.Stream, nil)
}

// partition returns the subtask of parallelism that reads subject.
func partition(subject string, parallelism int) int {
	h := fnv.New32a()
	h.Write([]byte(subject))
	return int(h.Sum32() % uint32(parallelism))
}

// runStartOf returns what the run found when its first subtask opened.
func (s *Source) runStartOf(ctx context.Context, st jetstream.Stream, info *jetstream.StreamInfo) (*runStart, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run != nil {
		return s.run, nil
	}
	rs := &runStart{created: info.Created, bound: info.State.LastSeq}
	switch s.StartMode {
	case "", StartEarliest:
		rs.start = max(info.State.FirstSeq, 1)
	case StartLatest:
		rs.start = info.State.LastSeq + 1
	case StartSequence:
		rs.start = s.StartSequence
	case StartTimestamp:
		// A consumer created at a time reports the sequence it starts from.
		cfg := jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &s.StartTime,
			AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: time.Minute, MemoryStorage: true}
		if len(s.Subjects) == 1 {
			cfg.FilterSubject = s.Subjects[0]
		} else {
			cfg.FilterSubjects = s.Subjects
		}
		c, err := st.CreateConsumer(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: find the first message at %s: %w", s.what(), s.StartTime.Format(time.RFC3339Nano), err)
		}
		rs.start = c.CachedInfo().Delivered.Stream + 1
		st.DeleteConsumer(ctx, c.CachedInfo().Name)
	}
	s.run = rs
	return rs, nil
}

// Open implements dataflow.Source.
func (s *Source) Open(ctx context.Context, subtask, parallelism int, pos []byte) (dataflow.SourceReader, error) {
	if err := s.Check(); err != nil {
		return nil, restart.Permanent(err)
	}
	what, nc, js, err := s.Conn.subtask(ctx, s.what(), subtask, "source "+s.Stream)
	if err != nil {
		return nil, err
	}
	r := &reader{s: s, what: what, subtask: subtask, parallelism: parallelism, nc: nc, js: js,
		covers: map[string]*uint64{}}
	if err := r.open(ctx, pos); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// decodePosition reads a position a subtask of this source wrote.
func (s *Source) decodePosition(b []byte) (*position, error) {
	var p position
	if err := json.Unmarshal(b, &p); err != nil || p.Stream == "" {
		return nil, restart.Permanent(fmt.Errorf("%s: restore position %.200q: not a jetstream source position (%v)", s.what(), b, err))
	}
	if p.Stream != s.Stream {
		return nil, restart.Permanent(fmt.Errorf("%s: the checkpoint's position is of stream %q: a job restored from it reads the stream it read", s.what(), p.Stream))
	}
	if p.Subjects == nil {
		p.Subjects = map[string]uint64{}
	}
	return &p, nil
}

// Redistribute implements dataflow.Redistributor: the subjects of every old subtask's
// position go to the subtask that reads them at the new parallelism (the hash of the
// subject mod parallelism), each with the sequence it was done up to; what the positions
// say of the subjects they do not list holds for all of them, and the least of it is kept.
// A checkpoint in which a subtask saved no position is not redistributed.
func (s *Source) Redistribute(states [][]byte, parallelism int) ([][]byte, error) {
	var merged *position
	for i, st := range states {
		if st == nil {
			return nil, fmt.Errorf("%s: old subtask %d saved no position: restore this checkpoint at its own parallelism %d", s.what(), i, len(states))
		}
		p, err := s.decodePosition(st)
		if err != nil {
			return nil, fmt.Errorf("subtask %d: %w", i, err)
		}
		if merged == nil {
			merged = &position{Stream: p.Stream, Created: p.Created, Others: p.Others, Subjects: map[string]uint64{}}
		} else if !p.Created.Equal(merged.Created) {
			return nil, fmt.Errorf("%s: old subtasks read streams created at %s and %s", s.what(), merged.Created, p.Created)
		}
		merged.Others = min(merged.Others, p.Others)
		for subj, seq := range p.Subjects {
			merged.Subjects[subj] = max(merged.Subjects[subj], seq)
		}
	}
	out := make([][]byte, parallelism)
	if merged == nil {
		return out, nil
	}
	shares := make([]position, parallelism)
	for i := range shares {
		shares[i] = position{Stream: merged.Stream, Created: merged.Created, Others: merged.Others, Subjects: map[string]uint64{}}
	}
	for subj, seq := range merged.Subjects {
		shares[partition(subj, parallelism)].Subjects[subj] = seq
	}
	for i := range shares {
		b, err := json.Marshal(shares[i])
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// reader is one subtask's reader.
type reader struct {
	s                    *Source
	what                 string
	subtask, parallelism int
	nc                   *nats.Conn
	js                   jetstream.JetStream
	st                   jetstream.Stream
	created              time.Time
	bound                uint64

	// covers holds, per subject, the sequence up to which it is done; others the same for
	// the subjects it does not hold.
	covers map[string]*uint64
	others uint64
	// through is the sequence of the last message the consumer delivered; every subject
	// of the consumer's filter is done up to it (the consumer started at most one past
	// each cover).
	through uint64

	cons      jetstream.ConsumeContext
	consDone  chan struct{}
	msgs      chan jetstream.Msg
	errs      chan error
	eof       bool
	lastDisc  time.Time
	downSince time.Time
	timer     *time.Timer

	lastSubj  string
	lastCover *uint64

	// ev receives the reader's lag (Measure); nil when nothing measures it.
	ev dataflow.ConnectorEvents
	// lastTime is the stream timestamp of the last message emitted since the lag was last
	// reported.
	lastTime time.Time
	lag      lagProbe
}

// all reports whether the subtask reads every subject of the filters (parallelism 1), so
// its consumer takes the filters as they are.
func (r *reader) all() bool { return r.parallelism == 1 }

func (r *reader) open(ctx context.Context, pos []byte) error {
	s := r.s
	st, info, err := stream(ctx, r.nc, r.js, s.Stream, r.what)
	if err != nil {
		return err
	}
	r.st, r.created = st, info.Created
	if err := s.checkFilters(info, r.nc.ConnectedUrlRedacted()); err != nil {
		return err
	}
	rs, err := s.runStartOf(ctx, st, info)
	if err != nil {
		return err
	}
	r.bound = rs.bound
	var p *position
	if pos == nil {
		p = &position{Stream: s.Stream, Created: rs.created, Others: rs.start - 1, Subjects: map[string]uint64{}}
	} else if p, err = s.decodePosition(pos); err != nil {
		return err
	}
	if !p.Created.Equal(info.Created) {
		return restart.Permanent(fmt.Errorf("%s: stream %q on %s was created at %s, but the position being restored is of the stream created at %s: "+
			"the stream was deleted and created again, and its sequences are not the ones the checkpoint holds; start the job without restoring, or restore the stream",
			r.what, s.Stream, r.nc.ConnectedUrlRedacted(), info.Created.UTC().Format(time.RFC3339Nano), p.Created.UTC().Format(time.RFC3339Nano)))
	}
	r.others = p.Others
	for subj, seq := range p.Subjects {
		if r.all() || partition(subj, r.parallelism) == r.subtask {
			v := seq
			r.covers[subj] = &v
		}
	}
	// The subjects the stream has now: those of the subtask not in its position start
	// where the position says the unlisted ones are done. A subtask that reads every
	// subject lists them only to check for a gap.
	var listed []string
	var last uint64
	if !r.all() || r.others+1 < info.State.FirstSeq {
		if listed, last, err = r.list(ctx); err != nil {
			return err
		}
	}
	var fresh []string
	for _, subj := range listed {
		if _, ok := r.covers[subj]; !ok && (r.all() || partition(subj, r.parallelism) == r.subtask) {
			fresh = append(fresh, subj)
		}
	}
	if err := r.checkRetention(info.State.FirstSeq, fresh); err != nil {
		return err
	}
	if !r.all() {
		if err := r.add(ctx, fresh, last); err != nil {
			return err
		}
	}
	r.lastDisc = time.Now()
	return r.start(ctx)
}

// checkRetention refuses, by name, the subjects whose next message to read is before the
// stream's first sequence: the stream's retention may have dropped messages the position
// still needs. fresh are the subjects the position does not list.
func (r *reader) checkRetention(first uint64, fresh []string) error {
	if first <= 1 {
		return nil
	}
	type gap struct {
		subject string
		next    uint64
	}
	var gaps []gap
	for subj, c := range r.covers {
		if *c+1 < first {
			gaps = append(gaps, gap{subj, *c + 1})
		}
	}
	if r.others+1 < first {
		for _, subj := range fresh {
			gaps = append(gaps, gap{subj, r.others + 1})
		}
	}
	if len(gaps) == 0 {
		return nil
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].subject < gaps[j].subject })
	var names []string
	for i, g := range gaps {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(gaps)-5))
			break
		}
		names = append(names, fmt.Sprintf("%s from sequence %d", g.subject, g.next))
	}
	if !r.s.SkipRetentionGaps {
		return restart.Permanent(fmt.Errorf("%s: stream %q now starts at sequence %d, but the position needs messages before it (%s): "+
			"the stream's retention (max age, max messages or bytes, a purge) may have dropped them; restore a later checkpoint, or set %s to skip what is gone",
			r.what, r.s.Stream, first, strings.Join(names, ", "), orDefault(keyHint(r.s.Keys, func(k *SourceKeys) string { return k.OnRetentionGap }), "Source.SkipRetentionGaps")))
	}
	if r.s.Logger != nil {
		r.s.Logger.Warn("jetstream source skips messages the stream's retention dropped", "stream", r.s.Stream, "subtask", r.subtask, "first", first, "subjects", strings.Join(names, ", "))
	}
	for _, c := range r.covers {
		*c = max(*c, first-1)
	}
	r.others = max(r.others, first-1)
	return nil
}

func orDefault(hint, def string) string {
	if hint == "" {
		return def
	}
	return strings.Trim(hint, " ()") + "=skip"
}

// list returns the subjects the stream holds that match the filters, sorted, and the
// stream's last sequence before the listing: every subject with a message up to it is
// listed.
func (r *reader) list(ctx context.Context) ([]string, uint64, error) {
	info, err := r.st.Info(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: stream %q on %s: %w", r.what, r.s.Stream, r.nc.ConnectedUrlRedacted(), err)
	}
	last := info.State.LastSeq
	filters := r.s.Subjects
	if len(filters) == 0 {
		filters = []string{">"}
	}
	seen := map[string]bool{}
	for _, f := range filters {
		info, err := r.st.Info(ctx, jetstream.WithSubjectFilter(f))
		if err != nil {
			return nil, 0, fmt.Errorf("%s: list the subjects of stream %q matching %q: %w", r.what, r.s.Stream, f, err)
		}
		for subj := range info.State.Subjects {
			seen[subj] = true
		}
	}
	out := make([]string, 0, len(seen))
	for subj := range seen {
		out = append(out, subj)
	}
	sort.Strings(out)
	return out, last, nil
}

// add takes subjects the subtask did not read into its filter: each is done up to just
// before its first message after others (or, having none, up to last, the stream's last
// sequence before they were listed).
func (r *reader) add(ctx context.Context, subjects []string, last uint64) error {
	for _, subj := range subjects {
		c := max(last, r.others)
		m, err := r.st.GetMsg(ctx, r.others+1, jetstream.WithGetMsgSubject(subj))
		switch {
		case err == nil:
			c = m.Sequence - 1
		case !errors.Is(err, jetstream.ErrMsgNotFound):
			return fmt.Errorf("%s: first message of subject %q in stream %q: %w", r.what, subj, r.s.Stream, err)
		}
		r.covers[subj] = &c
	}
	r.others = max(r.others, last)
	return nil
}

// materialize writes what the consumer's progress says into the covers.
func (r *reader) materialize() {
	for _, c := range r.covers {
		*c = max(*c, r.through)
	}
	if r.all() {
		r.others = max(r.others, r.through)
	}
}

// start (re)creates the ordered consumer at the first sequence any of the subtask's
// subjects still needs.
func (r *reader) start(ctx context.Context) error {
	r.stop()
	r.materialize()
	first := r.others + 1
	if !r.all() {
		first = 0
	}
	filter := r.s.Subjects
	if !r.all() {
		filter = make([]string, 0, len(r.covers))
		for subj := range r.covers {
			filter = append(filter, subj)
		}
		slices.Sort(filter)
	}
	for _, c := range r.covers {
		if first == 0 || *c+1 < first {
			first = *c + 1
		}
	}
	if first == 0 { // no subject yet
		if r.s.Bounded {
			r.done()
		}
		return nil
	}
	r.through = first - 1
	if r.s.Bounded && first > r.bound {
		r.done()
		return nil
	}
	cons, err := r.st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: filter,
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: first, MaxResetAttempts: 5})
	if err != nil {
		return fmt.Errorf("%s: consumer of stream %q from sequence %d: %w", r.what, r.s.Stream, first, err)
	}
	// Each consumer has channels of its own, so that nothing the one before delivered
	// late is taken for what this one delivers.
	done, msgs, errs := make(chan struct{}), make(chan jetstream.Msg, 2*pullBatch), make(chan error, 1)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		select {
		case msgs <- m:
		case <-done:
		}
	}, jetstream.PullMaxMessages(pullBatch), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if fatalConsumeError(err) {
			select {
			case errs <- err:
			default:
			}
		}
	}))
	if err != nil {
		close(done)
		return fmt.Errorf("%s: read stream %q from sequence %d: %w", r.what, r.s.Stream, first, err)
	}
	r.cons, r.consDone, r.msgs, r.errs = cc, done, msgs, errs
	if r.s.Bounded {
		if info := cons.CachedInfo(); info != nil && info.NumPending == 0 {
			r.done()
		}
	}
	return nil
}

// fatalConsumeError reports whether an error of the ordered consumer ends the reader: the
// stream is gone, the connection closed, or recreating the consumer failed for good.
// Missed heartbeats, deleted consumers and the like are repaired by the consumer itself.
func fatalConsumeError(err error) bool {
	return errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, jetstream.ErrStreamNotFound) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, jetstream.ErrJetStreamNotEnabled)
}

// stop ends the consumer and drops the messages it had delivered but the reader had not
// taken: a new consumer starts at or before them.
func (r *reader) stop() {
	if r.cons == nil {
		return
	}
	r.cons.Stop()
	close(r.consDone)
	r.cons, r.consDone, r.msgs, r.errs = nil, nil, nil, nil
}

// discover looks for subjects of the subtask it does not read yet, and reads them too.
func (r *reader) discover(ctx context.Context) error {
	r.lastDisc = time.Now()
	listed, last, err := r.list(ctx)
	if err != nil {
		return err
	}
	var fresh []string
	for _, subj := range listed {
		if _, ok := r.covers[subj]; !ok && partition(subj, r.parallelism) == r.subtask {
			fresh = append(fresh, subj)
		}
	}
	if len(fresh) == 0 {
		r.others = max(r.others, last)
		return nil
	}
	r.materialize()
	if err := r.add(ctx, fresh, last); err != nil {
		return err
	}
	if r.s.Logger != nil {
		r.s.Logger.Debug("jetstream source reads new subjects", "stream", r.s.Stream, "subtask", r.subtask, "subjects", len(fresh))
	}
	return r.start(ctx)
}

// Read implements dataflow.SourceReader: it emits up to max messages, waiting a little for
// the first, and then reports its lag when measured.
func (r *reader) Read(ctx context.Context, max int, emit func(any)) error {
	err := r.read(ctx, max, emit)
	r.measure()
	return err
}

func (r *reader) read(ctx context.Context, max int, emit func(any)) error {
	if r.eof {
		return io.EOF
	}
	if !r.all() && !r.s.Bounded && time.Since(r.lastDisc) >= r.s.interval() {
		if err := r.discover(ctx); err != nil {
			return err
		}
	}
	if err := r.checkConnection(); err != nil {
		return err
	}
	if r.cons == nil {
		return r.wait(ctx)
	}
	var m jetstream.Msg
	if r.timer == nil {
		r.timer = time.NewTimer(idleWait)
	} else {
		r.timer.Reset(idleWait)
	}
	select {
	case m = <-r.msgs:
	case err := <-r.errs:
		return r.consumeError(err)
	case <-r.timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	if !r.timer.Stop() {
		select {
		case <-r.timer.C:
		default:
		}
	}
	for n := 0; ; {
		emitted, err := r.take(m, emit)
		if err != nil {
			return err
		}
		if r.eof {
			return io.EOF
		}
		if n += emitted; n >= max {
			return nil
		}
		select {
		case m = <-r.msgs:
		default:
			return nil
		}
	}
}

// wait waits a little while the subtask has no subject to read.
func (r *reader) wait(ctx context.Context) error {
	t := time.NewTimer(idleWait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *reader) consumeError(err error) error {
	return fmt.Errorf("%s: reading stream %q on %s: %w", r.what, r.s.Stream, r.nc.ConnectedUrlRedacted(), err)
}

// checkConnection fails the reader once its connection has been down for too long.
func (r *reader) checkConnection() error {
	if r.nc.IsConnected() {
		r.downSince = time.Time{}
		return nil
	}
	if r.nc.IsClosed() {
		return fmt.Errorf("%s: the connection to %s is closed", r.what, r.s.Conn.servers())
	}
	if r.downSince.IsZero() {
		r.downSince = time.Now()
	} else if time.Since(r.downSince) > disconnectedLimit {
		return fmt.Errorf("%s: no connection to %s for %s", r.what, r.s.Conn.servers(), disconnectedLimit)
	}
	return nil
}

// take handles one delivered message: a message its subject is done with is dropped, the
// others are decoded (or unpacked) and emitted. It returns how many records it emitted.
func (r *reader) take(m jetstream.Msg, emit func(any)) (int, error) {
	meta, err := m.Metadata()
	if err != nil {
		return 0, fmt.Errorf("%s: message of stream %q without metadata: %w", r.what, r.s.Stream, err)
	}
	seq := meta.Sequence.Stream
	if r.s.Bounded && seq > r.bound {
		r.done()
		return 0, nil
	}
	r.through = max(r.through, seq)
	subj := m.Subject()
	c := r.lastCover
	if subj != r.lastSubj || c == nil {
		var ok bool
		if c, ok = r.covers[subj]; !ok {
			v := r.others
			c = &v
			r.covers[subj] = c
		}
		r.lastSubj, r.lastCover = subj, c
	}
	emitted := 0
	if seq > *c {
		n, err := r.emit(subj, m.Data(), emit)
		switch {
		case err == nil:
			emitted = n
			r.lastTime = meta.Timestamp
		case r.s.SkipDecodeErrors:
			n := r.s.skipped.Add(1)
			if r.s.Logger != nil && (n <= 10 || n%1000 == 0) {
				r.s.Logger.Warn("jetstream source skips a message that does not decode", "stream", r.s.Stream, "sequence", seq, "subject", subj, "error", err, "skipped", n)
			}
		case r.s.Unpack != nil:
			return 0, restart.Permanent(fmt.Errorf("%s: stream %q sequence %d (subject %q) does not decode: %w", r.what, r.s.Stream, seq, subj, err))
		default:
			return 0, restart.Permanent(fmt.Errorf("%s: stream %q sequence %d (subject %q) does not decode: %w; set %s to skip such messages",
				r.what, r.s.Stream, seq, subj, err, orDefault(keyHint(r.s.Keys, func(k *SourceKeys) string { return k.OnDecodeError }), "Source.SkipDecodeErrors")))
		}
		*c = seq
	}
	if r.s.Bounded && (meta.NumPending == 0 || seq >= r.bound) {
		r.done()
	}
	return emitted, nil
}

// done ends a bounded reader: every message of its subjects up to the bound is done.
func (r *reader) done() {
	r.through = max(r.through, r.bound)
	r.materialize()
	r.eof = true
	r.stop()
}

// errInvalidUTF8 is the decode error of a payload that is not UTF-8 text.
var errInvalidUTF8 = errors.New("the payload is not valid UTF-8 text")

// emit decodes (or unpacks) a message and emits its records; it returns how many.
func (r *reader) emit(subject string, data []byte, emit func(any)) (int, error) {
	switch {
	case r.s.Unpack != nil:
		return r.s.Unpack(subject, data, emit)
	case r.s.Decode != nil:
		rec, err := r.s.Decode(subject, data)
		if err != nil {
			return 0, err
		}
		emit(rec)
		return 1, nil
	case !utf8.Valid(data):
		return 0, errInvalidUTF8
	}
	emit(string(data))
	return 1, nil
}

// Position implements dataflow.SourceReader.
func (r *reader) Position() ([]byte, error) {
	r.materialize()
	p := position{Stream: r.s.Stream, Created: r.created, Others: r.others, Subjects: make(map[string]uint64, len(r.covers))}
	for subj, c := range r.covers {
		p.Subjects[subj] = *c
	}
	return json.Marshal(p)
}

// Close implements dataflow.SourceReader.
func (r *reader) Close() error {
	r.lag.close()
	r.stop()
	if r.timer != nil {
		r.timer.Stop()
	}
	r.nc.Close()
	return nil
}
