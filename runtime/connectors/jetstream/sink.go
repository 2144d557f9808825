package jetstream

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/restart"
)

// Defaults of a sink.
const (
	// DefaultBatchSize is the most messages one atomic batch holds, its marker included:
	// the server's default limit (jetstream.limits.batch.max_msgs).
	DefaultBatchSize = 1000
	// DefaultMarkerPrefix starts the subjects of the writers' markers.
	DefaultMarkerPrefix = "flowstate.markers"
	// KeyPlaceholder in Sink.Subject is replaced by each record's key.
	KeyPlaceholder = "{key}"
	// headerRoom is what the batch headers add to a message, counted against the
	// server's max payload.
	headerRoom = 256
	// commitTries is how often a part whose publish failed without being refused is sent
	// again before the commit fails.
	commitTries = 3
)

// Keyed is a record with a key, which a Sink's subject template puts in the subject.
type Keyed interface {
	// Key returns the record's key: one or more subject tokens.
	Key() string
}

// Sink writes records to a JetStream stream exactly once, with no time bound. The records
// of a checkpoint interval stay in the writer and go into the sink state PreCommit returns
// (so the checkpoint storage holds them); when checkpoint N completes, Commit(N) publishes
// every pending transaction up to N as JetStream atomic batches (the stream needs
// allow_atomic), in parts of at most BatchSize messages. The last message of each part is a
// marker on a subject the writer owns, MarkerPrefix.<job>.<subtask>, that says which
// transaction and part the batch commits; the first message carries the marker subject's
// expected last sequence, so the server refuses a batch whose writer did not see the last
// marker. A writer restored after a crash reads the last marker and commits only the parts
// it does not show; a writer that opens publishes a marker of a new owner epoch first, so
// a zombie writer of an older run can commit nothing more. A writer whose chain shows
// commits the state it opens with does not account for (no state, or a checkpoint older
// than the last committed) is refused for good before it publishes: it would publish that
// output again. None of it depends on the stream's duplicate window. Use a *Sink.
type Sink struct {
	// Conn is where the stream is.
	Conn Conn
	// Stream is the stream written to; it must capture Subject and the marker subjects,
	// and allow atomic publish.
	Stream string
	// Subject is the subject of every record, or a template in which KeyPlaceholder is
	// replaced by the record's key (see Format).
	Subject string
	// MarkerPrefix starts the writers' marker subjects (DefaultMarkerPrefix when "").
	MarkerPrefix string
	// BatchSize is the most messages one atomic batch holds, its marker included
	// (DefaultBatchSize when 0); at least 2.
	BatchSize int
	// Job is the job's name, which the marker subjects hold.
	Job string
	// Format turns a record into its key and payload. Nil: the key of a Keyed record
	// (else none), and as payload a []byte or string as it is, an encoding.TextAppender's
	// or encoding.TextMarshaler's text, or fmt's default format.
	Format func(rec any) (key string, data []byte, err error)
	// Keys name the configuration keys the settings come from, for errors (nil: none).
	Keys *SinkKeys
	// Logger receives what restores skip and commit (nil: none).
	Logger hclog.Logger
	// Independent makes each writer answer for its own marker chain only: a writer that
	// restores no state checks and fences its own chain, not its siblings', and a state
	// it restores must be of its own chain. Set it when the subtasks are tasks that start
	// and restore on their own, at different times, on any runner (distributed mode);
	// without it the subtasks are one run's, which start together, and a writer that
	// restores nothing refuses to open while a sibling's chain shows commits (another
	// runner of the job writes the stream). Redistribute is not for independent writers.
	Independent bool
	// Epoch, if set, returns the fencing token of the lease the writer's task is held at
	// (runtime/ownership's lease epoch, which every takeover raises): the writer records it
	// in its markers, and refuses to open, before it publishes, a chain whose last marker
	// shows a greater one (a newer holder of the task has written there).
	Epoch func() int64

	// failAfterParts, when positive, makes a writer fail (as a crash would) once it has
	// committed that many parts: tests use it.
	failAfterParts int
}

// SinkKeys name the configuration keys a Sink's settings come from.
type SinkKeys struct {
	Stream, Subject, MarkerSubject, BatchSize string
}

func (s *Sink) what() string { return fmt.Sprintf("jetstream sink (stream %q)", s.Stream) }

func (s *Sink) batchSize() int {
	if s.BatchSize > 0 {
		return s.BatchSize
	}
	return DefaultBatchSize
}

func (s *Sink) markerPrefix() string {
	if s.MarkerPrefix != "" {
		return s.MarkerPrefix
	}
	return DefaultMarkerPrefix
}

// MarkerSubject returns the subject of the markers of the writer of subtask.
func (s *Sink) MarkerSubject(subtask int) string {
	return s.markerPrefix() + "." + s.Job + "." + strconv.Itoa(subtask)
}

// Check reports what is wrong with the settings, without connecting.
func (s *Sink) Check() error {
	key := func(k func(*SinkKeys) string) string { return keyHint(s.Keys, k) }
	if err := s.Conn.Check(); err != nil {
		return fmt.Errorf("%s: %w", s.what(), err)
	}
	switch {
	case s.Stream == "":
		return fmt.Errorf("jetstream sink: no stream given%s", key(func(k *SinkKeys) string { return k.Stream }))
	case s.Subject == "":
		return fmt.Errorf("%s: no subject given%s", s.what(), key(func(k *SinkKeys) string { return k.Subject }))
	case s.Job == "":
		return fmt.Errorf("%s: no job name for the marker subjects", s.what())
	case s.BatchSize != 0 && s.BatchSize < 2:
		return fmt.Errorf("%s: batch size %d%s: a batch needs room for a record and its marker, at least 2", s.what(), s.BatchSize, key(func(k *SinkKeys) string { return k.BatchSize }))
	}
	probe := strings.ReplaceAll(s.Subject, KeyPlaceholder, "k")
	if strings.ContainsAny(probe, "{}") {
		return fmt.Errorf("%s: subject %q%s: the only placeholder is %s", s.what(), s.Subject, key(func(k *SinkKeys) string { return k.Subject }), KeyPlaceholder)
	}
	if err := checkSubject(probe); err != nil {
		return fmt.Errorf("%s: subject %q%s: %w", s.what(), s.Subject, key(func(k *SinkKeys) string { return k.Subject }), err)
	}
	if err := checkSubject(s.MarkerSubject(0)); err != nil {
		return fmt.Errorf("%s: marker subject %q%s: %w", s.what(), s.MarkerSubject(0), key(func(k *SinkKeys) string { return k.MarkerSubject }), err)
	}
	return nil
}

// checkSubject reports why subject cannot be published to: empty tokens, white space, or
// wildcards.
func checkSubject(subject string) error {
	if subject == "" {
		return errors.New("empty subject")
	}
	if strings.ContainsAny(subject, " \t\r\n\f\v") {
		return errors.New("a subject holds no white space")
	}
	for _, tok := range strings.Split(subject, ".") {
		switch tok {
		case "":
			return errors.New("a subject has no empty token")
		case "*", ">":
			return errors.New("a subject published to holds no wildcard")
		}
	}
	return nil
}

// subjectMatches reports whether NATS subject filter matches subject.
func subjectMatches(filter, subject string) bool {
	ft, st := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, f := range ft {
		if f == ">" {
			return len(st) > i
		}
		if i >= len(st) || f != "*" && f != st[i] {
			return false
		}
	}
	return len(ft) == len(st)
}

// captured reports whether the stream's subjects capture subject.
func captured(info *jetstream.StreamInfo, subject string) bool {
	subjects := info.Config.Subjects
	if len(subjects) == 0 {
		subjects = []string{info.Config.Name}
	}
	for _, f := range subjects {
		if subjectMatches(f, subject) {
			return true
		}
	}
	return false
}

// checkStream reports why the stream cannot take the sink's batches.
func (s *Sink) checkStream(nc *nats.Conn, info *jetstream.StreamInfo, subtask int) error {
	if !info.Config.AllowAtomicPublish {
		return restart.Permanent(fmt.Errorf("%s: stream %q on %s does not allow atomic batch publish: create or update it with allow_atomic (nats stream edit %s --allow-batch), which the exactly-once commits need",
			s.what(), s.Stream, nc.ConnectedUrlRedacted(), s.Stream))
	}
	if m := s.MarkerSubject(subtask); !captured(info, m) {
		return restart.Permanent(fmt.Errorf("%s: stream %q on %s does not capture the marker subject %s (its subjects: %s): add %s.> to the stream's subjects%s",
			s.what(), s.Stream, nc.ConnectedUrlRedacted(), m, strings.Join(info.Config.Subjects, ", "), s.markerPrefix(), keyHint(s.Keys, func(k *SinkKeys) string { return ", or change " + k.MarkerSubject })))
	}
	if !strings.Contains(s.Subject, KeyPlaceholder) && !captured(info, s.Subject) {
		return restart.Permanent(fmt.Errorf("%s: stream %q on %s does not capture subject %s (its subjects: %s)",
			s.what(), s.Stream, nc.ConnectedUrlRedacted(), s.Subject, strings.Join(info.Config.Subjects, ", ")))
	}
	return nil
}

// Preflight implements dataflow.Preflighter: the settings must hold and, when a server
// answers, the stream must exist, allow atomic publish and capture the subjects. A server
// that cannot be reached is left for the subtasks to report, so that the restart strategy
// governs the retries.
func (s *Sink) Preflight(ctx context.Context) error {
	if err := s.Check(); err != nil {
		return err
	}
	return s.Conn.preflight(ctx, s.what(), s.Stream, func(nc *nats.Conn, info *jetstream.StreamInfo) error { return s.checkStream(nc, info, 0) })
}

// mark is how far a marker chain's commits have come: transactions are committed in the
// order of their writer's epoch, their checkpoint and their part, and every one up to the
// mark is committed.
type mark struct {
	Epoch      uint64 `json:"epoch"`
	Checkpoint int64  `json:"checkpoint"`
	Part       int    `json:"part"`
}

func (m mark) less(o mark) bool {
	if m.Epoch != o.Epoch {
		return m.Epoch < o.Epoch
	}
	if m.Checkpoint != o.Checkpoint {
		return m.Checkpoint < o.Checkpoint
	}
	return m.Part < o.Part
}

// Marker kinds.
const (
	markerOpen   = "open"
	markerCommit = "commit"
	// markerEnd ends a batch of a repartition writer's end frames (Repartition): it
	// moves the chain, not its mark.
	markerEnd = "end"
)

// marker is the payload of a marker message. Owner is the epoch of the writer that wrote
// it; Epoch, Checkpoint and Part are the chain's mark after it (for a commit marker, the
// part it commits, of Parts).
type marker struct {
	Job     string `json:"job"`
	Subtask int    `json:"subtask"`
	Owner   uint64 `json:"owner"`
	// Lease is the fencing token of the writer's lease (Sink.Epoch; 0: none).
	Lease int64  `json:"lease,omitempty"`
	Kind  string `json:"kind"`
	mark
	Parts int `json:"parts,omitempty"`
}

// chain is a marker subject as a writer holds it.
type chain struct {
	subtask int
	subject string
	epoch   uint64 // the writer's owner epoch on the chain
	last    uint64 // the subject's last sequence, the expectation of the next batch
	done    mark
}

// tx is a transaction: the records of one checkpoint interval of one writer.
type tx struct {
	Chain      int    `json:"chain"`
	Epoch      uint64 `json:"epoch"`
	Checkpoint int64  `json:"checkpoint"`
	PartSize   int    `json:"part_size"`
	// Subjects are the subjects the records go to; each record names one by index.
	Subjects []string `json:"subjects"`
	Records  int      `json:"records"`

	subj []int32 // per record, its subject's index
	ends []int   // per record, the end of its payload in data
	data []byte
	keys map[string]int32 // subject (or key, for a template) -> index
}

func (t *tx) parts() int {
	if t.Records == 0 {
		return 0
	}
	return (t.Records + t.PartSize - 1) / t.PartSize
}

func (t *tx) payload(i int) []byte {
	start := 0
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.data[start:t.ends[i]:t.ends[i]]
}

// Open implements dataflow.Sink.
func (s *Sink) Open(ctx context.Context, subtask, parallelism int, state []byte) (dataflow.SinkWriter, error) {
	if err := s.Check(); err != nil {
		return nil, restart.Permanent(err)
	}
	what, nc, js, err := s.Conn.subtask(ctx, s.what(), subtask, "sink "+s.Job)
	if err != nil {
		return nil, err
	}
	w := &writer{s: s, what: what, subtask: subtask, nc: nc, js: js, chains: map[int]*chain{}, valid: map[string]bool{}}
	if err := w.open(ctx, parallelism, state); err != nil {
		nc.Close()
		return nil, err
	}
	return w, nil
}

// writer is one subtask's writer.
type writer struct {
	s          *Sink
	what       string
	subtask    int
	nc         *nats.Conn
	js         jetstream.JetStream
	st         jetstream.Stream
	info       *jetstream.StreamInfo
	maxPayload int
	chains     map[int]*chain
	own        *chain
	cur        *tx
	pending    []*tx
	valid      map[string]bool // subjects checked: valid and captured by the stream
	prefix     string          // the subject template's text before and after the key
	suffix     string
	templated  bool
	lease      int64 // the fencing token of the writer's lease (Sink.Epoch), at open
	committed  int   // parts committed (failAfterParts)
	// committedRecords counts the records of those parts; ev receives the commits
	// (Measure), nil when nothing measures the writer.
	committedRecords int
	ev               dataflow.ConnectorEvents

	// mu guards pending and the chains' last and done, which the commit in flight
	// changes while the subtask writes and pre-commits.
	mu sync.Mutex
	// inflight receives the result of the commit in flight (nil: none); failed is the
	// first commit that failed, which every later Commit and Flush returns.
	inflight chan error
	failed   error
}

func (w *writer) open(ctx context.Context, parallelism int, state []byte) error {
	s := w.s
	st, info, err := stream(ctx, w.nc, w.js, s.Stream, w.what)
	if err != nil {
		return err
	}
	w.st, w.info = st, info
	if err := s.checkStream(w.nc, info, w.subtask); err != nil {
		return err
	}
	w.maxPayload = int(w.nc.MaxPayload())
	if m := int(info.Config.MaxMsgSize); m > 0 && m < w.maxPayload {
		w.maxPayload = m
	}
	w.prefix, w.suffix, w.templated = strings.Cut(s.Subject, KeyPlaceholder)
	var st0 sinkState
	if state != nil {
		if st0, err = decodeSinkState(state); err != nil {
			return restart.Permanent(fmt.Errorf("%s: restore state: %w", w.what, err))
		}
		if st0.Job != s.Job {
			return restart.Permanent(fmt.Errorf("%s: the state being restored is of job %q's markers, this sink writes job %q's", w.what, st0.Job, s.Job))
		}
		if err := w.checkOwnState(st0); err != nil {
			return err
		}
	}
	if s.Epoch != nil {
		w.lease = s.Epoch()
	}
	if state == nil && !s.Independent {
		// A run that restores nothing looks at its sibling subtasks' chains too, before it
		// fences its own: another runner of the job may have committed on those only, and
		// this subtask would fence that runner's writer before a sibling is refused.
		for id := range parallelism {
			if id == w.subtask {
				continue
			}
			seq, mk, err := w.lastMarker(ctx, s.MarkerSubject(id))
			if err != nil {
				return err
			}
			if err := w.checkRestore(s.MarkerSubject(id), seq, mk, restoring{}); err != nil {
				return err
			}
		}
	}
	// Fence every chain the writer answers for: its own, those it adopted in a rescale,
	// and those of the transactions it restores.
	ids := []int{w.subtask}
	ids = append(ids, st0.Adopted...)
	for _, t := range st0.Txs {
		ids = append(ids, t.Chain)
	}
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		c, err := w.fence(ctx, id, restoring{state: state != nil, checkpoint: st0.Checkpoint, known: st0.Chains[strconv.Itoa(id)]})
		if err != nil {
			return err
		}
		w.chains[id] = c
	}
	w.own = w.chains[w.subtask]
	// Commit what the restored checkpoint pre-committed and the markers do not show.
	txs := st0.Txs
	sort.SliceStable(txs, func(i, j int) bool {
		a, b := txs[i], txs[j]
		if a.Chain != b.Chain {
			return a.Chain < b.Chain
		}
		return mark{a.Epoch, a.Checkpoint, 0}.less(mark{b.Epoch, b.Checkpoint, 0})
	})
	for _, t := range txs {
		if err := w.commitTx(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// checkOwnState refuses, for an independent writer, a state that holds another chain's
// transactions or adopted chains: the state of another task.
func (w *writer) checkOwnState(st sinkState) error {
	if !w.s.Independent {
		return nil
	}
	chains := slices.Clone(st.Adopted)
	for _, t := range st.Txs {
		chains = append(chains, t.Chain)
	}
	for _, id := range chains {
		if id != w.subtask {
			return restart.Permanent(fmt.Errorf("%s: the state being restored holds transactions of marker chain %s, but an independent writer restores only its own (%s): it is another task's state",
				w.what, w.s.MarkerSubject(id), w.s.MarkerSubject(w.subtask)))
		}
	}
	return nil
}

// lastMarker reads the last message of a marker subject: its sequence (0: none) and its
// marker.
func (w *writer) lastMarker(ctx context.Context, subject string) (uint64, *marker, error) {
	seq, mk, err := lastMarkerOf(ctx, w.st, w.s.Stream, subject)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", w.what, err)
	}
	return seq, mk, nil
}

// lastMarkerOf reads the last message of marker subject of stream name: its sequence (0:
// none) and its marker.
func lastMarkerOf(ctx context.Context, st jetstream.Stream, name, subject string) (uint64, *marker, error) {
	m, err := st.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("read the last marker on %s of stream %q: %w", subject, name, err)
	}
	var mk marker
	if err := json.Unmarshal(m.Data, &mk); err != nil || mk.Kind == "" {
		return 0, nil, restart.Permanent(fmt.Errorf("the last message on marker subject %s of stream %q (sequence %d) is not a marker: "+
			"only the sink's writers may publish there", subject, name, m.Sequence))
	}
	return m.Sequence, &mk, nil
}

// restoring is what the state a writer opens with says about the chains it fences.
type restoring struct {
	state      bool   // the writer restores a state (false: the run restores no checkpoint)
	checkpoint int64  // the id of the checkpoint restored (0: not recorded)
	known      uint64 // the last sequence of the chain's subject the state saw
}

// fence takes chain id over: it reads the chain's last marker and publishes an open marker
// of the next owner epoch on top of it, which refuses the batches of any writer that
// opened before. It refuses the chain, before it publishes anything, when the commits the
// chain shows are not the restored state's to follow (checkRestore).
func (w *writer) fence(ctx context.Context, id int, r restoring) (*chain, error) {
	c := &chain{subtask: id, subject: w.s.MarkerSubject(id)}
	for try := 0; ; try++ {
		seq, mk, err := w.lastMarker(ctx, c.subject)
		if err != nil {
			return nil, err
		}
		if err := w.checkRestore(c.subject, seq, mk, r); err != nil {
			return nil, err
		}
		if mk != nil && w.s.Epoch != nil && mk.Lease > w.lease {
			return nil, restart.Permanent(fmt.Errorf("%s: fenced: marker subject %s of stream %q shows lease epoch %d (owner epoch %d, sequence %d), this writer's lease is of epoch %d: "+
				"a newer holder of the task has written there, and this writer must not take the chain back", w.what, c.subject, w.s.Stream, mk.Lease, mk.Owner, seq, w.lease))
		}
		if mk != nil {
			c.epoch, c.done = mk.Owner+1, mk.mark
		} else {
			c.epoch = 1
		}
		open := marker{Job: w.s.Job, Subtask: id, Owner: c.epoch, Lease: w.lease, Kind: markerOpen, mark: c.done}
		msg := nats.NewMsg(c.subject)
		msg.Data, _ = json.Marshal(open)
		msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(seq, 10))
		ack, err := w.js.PublishMsg(ctx, msg)
		if err == nil {
			c.last = ack.Sequence
			if w.s.Logger != nil {
				w.s.Logger.Debug("jetstream sink opened its marker chain", "subject", c.subject, "epoch", c.epoch, "sequence", c.last)
			}
			return c, nil
		}
		if !wrongLastSequence(err) || try >= 4 {
			return nil, fmt.Errorf("%s: open marker on %s of stream %q: %w", w.what, c.subject, w.s.Stream, err)
		}
		// Another writer moved the chain in between (a zombie's last commit): read again.
	}
}

// checkRestore reports why a writer restoring r must not take over the chain on subject,
// whose last marker mk is at sequence seq: the stream's limits removed markers the state
// saw; or the chain shows output committed that the run would publish again, because the
// run restores no checkpoint (a second runner of the job with another checkpoint
// directory, or a fresh start of a job whose output the stream holds) or restores one
// older than the last checkpoint committed. A file sink moves such output aside; a stream
// cannot, so the run is refused before it publishes anything, and no retry changes that.
func (w *writer) checkRestore(subject string, seq uint64, mk *marker, r restoring) error {
	if seq < r.known {
		return restart.Permanent(fmt.Errorf("%s: marker subject %s of stream %q has %s, but the checkpoint being restored saw its marker at sequence %d: "+
			"the stream's limits (max age, max messages, a purge) removed markers, and which commits were done cannot be told; keep the markers (no max age on %s.>)",
			w.what, subject, w.s.Stream, lastSeqText(seq), r.known, w.s.markerPrefix()))
	}
	if mk == nil || mk.Checkpoint == 0 {
		return nil // nothing committed on the chain yet
	}
	startOver := fmt.Sprintf("to start job %q over on this stream, delete the output it no longer wants and purge its marker subjects %s.%s.> (or give the job another job.name)",
		w.s.Job, w.s.markerPrefix(), w.s.Job)
	switch {
	case !r.state:
		return restart.Permanent(fmt.Errorf("%s: marker subject %s of stream %q shows checkpoint %d of job %q committed (owner epoch %d, sequence %d), but this run restores no checkpoint, "+
			"and would publish that output again: another runner of the job (with another execution.checkpointing.dir) writes the stream, or an earlier run did; "+
			"restore that run's checkpoint (--from latest, with its execution.checkpointing.dir), or %s",
			w.what, subject, w.s.Stream, mk.Checkpoint, w.s.Job, mk.Owner, seq, startOver))
	case r.checkpoint > 0 && mk.Checkpoint > r.checkpoint:
		return restart.Permanent(fmt.Errorf("%s: marker subject %s of stream %q shows checkpoint %d of job %q committed (owner epoch %d, sequence %d), after checkpoint %d being restored: "+
			"the stream holds the output of the checkpoints since, which this run would publish again; restore checkpoint %d or a later one (--from latest), or %s",
			w.what, subject, w.s.Stream, mk.Checkpoint, w.s.Job, mk.Owner, seq, r.checkpoint, mk.Checkpoint, startOver))
	}
	return nil
}

func lastSeqText(seq uint64) string {
	if seq == 0 {
		return "no message"
	}
	return fmt.Sprintf("its last message at sequence %d", seq)
}

// wrongLastSequence reports whether the server refused a publish for its expected last
// sequence (err_code 10071, or 10164 within a batch).
func wrongLastSequence(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == 10164
	}
	return false
}

// duplicateMarker reports whether the server refused a batch for a message id it holds
// within its duplicate window (err_code 10201).
func duplicateMarker(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == jetstreamext.JSErrCodeBatchPublishDuplicateMsgID
}

// Write implements dataflow.SinkWriter.
func (w *writer) Write(rec any) error {
	t := w.cur
	if t == nil {
		t = &tx{Chain: w.subtask, Epoch: w.own.epoch, PartSize: w.s.batchSize() - 1, keys: map[string]int32{}}
		w.cur = t
	}
	start := len(t.data)
	key, err := w.format(rec, t)
	if err != nil {
		t.data = t.data[:start]
		return err
	}
	lookup := w.s.Subject
	if w.templated {
		lookup = key
	}
	idx, ok := t.keys[lookup]
	if !ok {
		subject := w.s.Subject
		if w.templated {
			subject = w.prefix + key + w.suffix
		}
		if err := w.checkRecordSubject(subject, key); err != nil {
			t.data = t.data[:start]
			return err
		}
		idx = int32(len(t.Subjects))
		t.Subjects = append(t.Subjects, subject)
		t.keys[strings.Clone(lookup)] = idx
	}
	if n := len(t.data) - start; n+len(t.Subjects[idx])+headerRoom > w.maxPayload {
		t.data = t.data[:start]
		return restart.Permanent(fmt.Errorf("%s: a record of %d bytes for subject %s is over the server's max payload of %d bytes (less %d for headers): it can never be published",
			w.what, n, t.Subjects[idx], w.maxPayload, headerRoom))
	}
	t.subj = append(t.subj, idx)
	t.ends = append(t.ends, len(t.data))
	t.Records++
	return nil
}

// format appends rec's payload to t's data and returns its key.
func (w *writer) format(rec any, t *tx) (string, error) {
	if w.s.Format != nil {
		key, data, err := w.s.Format(rec)
		if err != nil {
			return "", fmt.Errorf("%s: format record %T: %w", w.what, rec, err)
		}
		t.data = append(t.data, data...)
		return key, nil
	}
	var key string
	if k, ok := rec.(Keyed); ok {
		key = k.Key()
	}
	var err error
	switch v := rec.(type) {
	case []byte:
		t.data = append(t.data, v...)
	case string:
		t.data = append(t.data, v...)
	case encoding.TextAppender:
		t.data, err = v.AppendText(t.data)
	case encoding.TextMarshaler:
		var b []byte
		b, err = v.MarshalText()
		t.data = append(t.data, b...)
	default:
		t.data = fmt.Append(t.data, v)
	}
	if err != nil {
		return "", fmt.Errorf("%s: format record %T: %w", w.what, rec, err)
	}
	return key, nil
}

// checkRecordSubject reports why a record cannot go to subject (made of its key).
func (w *writer) checkRecordSubject(subject, key string) error {
	if w.valid[subject] {
		return nil
	}
	if err := checkSubject(subject); err != nil {
		if w.templated {
			return restart.Permanent(fmt.Errorf("%s: record key %q makes subject %q of template %q: %w", w.what, key, subject, w.s.Subject, err))
		}
		return restart.Permanent(fmt.Errorf("%s: subject %q: %w", w.what, subject, err))
	}
	if !captured(w.info, subject) {
		return restart.Permanent(fmt.Errorf("%s: stream %q does not capture subject %s (its subjects: %s)", w.what, w.s.Stream, subject, strings.Join(w.info.Config.Subjects, ", ")))
	}
	if len(w.valid) < 1<<16 {
		w.valid[strings.Clone(subject)] = true
	}
	return nil
}

// Aborted implements dataflow.SinkWriter: the transaction stays pending, for the next
// completed checkpoint to commit.
func (w *writer) Aborted(int64) error { return nil }

// Close implements dataflow.SinkWriter: it waits for the commit in flight (see Commit);
// pending transactions stay in the checkpoints.
func (w *writer) Close() error {
	err := w.Flush()
	w.nc.Close()
	return err
}

// Redistribute implements dataflow.Redistributor: each pending transaction goes to the new
// subtask that answers for the marker chain it is committed on (its old subtask mod
// parallelism), and that subtask also fences the chains of the old subtasks it answers for,
// so that none of their zombie writers commits later.
func (s *Sink) Redistribute(states [][]byte, parallelism int) ([][]byte, error) {
	shares := make([]sinkState, parallelism)
	for i := range shares {
		shares[i] = sinkState{Job: s.Job, Chains: map[string]uint64{}}
	}
	for i, b := range states {
		shares[i%parallelism].Adopted = append(shares[i%parallelism].Adopted, i)
		if b == nil {
			continue
		}
		st, err := decodeSinkState(b)
		if err != nil {
			return nil, fmt.Errorf("%s subtask %d: state: %w", s.what(), i, err)
		}
		for i := range shares {
			shares[i].Checkpoint = max(shares[i].Checkpoint, st.Checkpoint)
		}
		for _, a := range st.Adopted {
			shares[a%parallelism].Adopted = append(shares[a%parallelism].Adopted, a)
		}
		for id, seq := range st.Chains {
			n, err := strconv.Atoi(id)
			if err != nil {
				return nil, fmt.Errorf("%s subtask %d: state names chain %q", s.what(), i, id)
			}
			sh := &shares[n%parallelism]
			sh.Chains[id] = max(sh.Chains[id], seq)
		}
		for _, t := range st.Txs {
			shares[t.Chain%parallelism].Txs = append(shares[t.Chain%parallelism].Txs, t)
		}
	}
	out := make([][]byte, parallelism)
	for i := range shares {
		slices.Sort(shares[i].Adopted)
		shares[i].Adopted = slices.Compact(shares[i].Adopted)
		b, err := shares[i].encode()
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
