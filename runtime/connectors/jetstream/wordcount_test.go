package jetstream_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/connectors/jetstream"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/sdk"
)

var errCrash = errors.New("injected crash")

// crashingSink fails the first Commit of its writers, before (the transaction of a
// completed checkpoint stays uncommitted) or after the commit (committed, but the job
// fails before it learns so), as a runner killed at that point would.
type crashingSink struct {
	dataflow.Sink
	after bool
	once  sync.Once
}

type crashingWriter struct {
	dataflow.SinkWriter
	s *crashingSink
}

func (c *crashingSink) Open(ctx context.Context, i, p int, st []byte) (dataflow.SinkWriter, error) {
	w, err := c.Sink.Open(ctx, i, p, st)
	if err != nil {
		return nil, err
	}
	return &crashingWriter{w, c}, nil
}

func (w *crashingWriter) Commit(id int64) error {
	crash := false
	w.s.once.Do(func() { crash = true })
	if !crash {
		return w.SinkWriter.Commit(id)
	}
	if w.s.after {
		if err := w.SinkWriter.Commit(id); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return errCrash
}

func (w *crashingWriter) Flush() error { return w.SinkWriter.(dataflow.Flusher).Flush() }

// fixture is a NATS server with an input stream holding a text and an output stream, and a
// checkpoint store.
type fixture struct {
	url      string
	js       njs.JetStream
	expected map[string]int64
	backend  sdk.StateBackend
	store    *checkpoint.Store
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	url, js := jetstream.StartTestServer(t)
	f := &fixture{url: url, js: js}
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "TEXT", Subjects: []string{"text.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "COUNTS", Subjects: []string{"counts.>", "flowstate.markers.>"},
		AllowAtomicPublish: true, Duplicates: time.Second}); err != nil {
		t.Fatal(err)
	}
	// The text, line by line over 7 subjects; the checker counts the same file.
	dir := t.TempDir()
	text := filepath.Join(dir, "text.txt")
	if err := wordcheck.WriteText(text, 200<<10, 800, 7); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.expected, err = wordcheck.Expected(text); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(text)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	var acks []njs.PubAckFuture
	for i := 0; sc.Scan(); i++ {
		a, err := js.PublishAsync(fmt.Sprintf("text.part%d", i%7), []byte(sc.Text()))
		if err != nil {
			t.Fatal(err)
		}
		acks = append(acks, a)
	}
	for _, a := range acks {
		select {
		case <-a.Ok():
		case err := <-a.Err():
			t.Fatal(err)
		}
	}
	f.backend, f.store = newBackend(t), newStore(t, dir, "wordcount")
	return f
}

// newBackend returns a configured hashmap backend.
func newBackend(t *testing.T) sdk.StateBackend {
	t.Helper()
	b := hashmap.New()
	if err := b.Configure(context.Background(), sdk.Options{}); err != nil {
		t.Fatal(err)
	}
	return b
}

// newStore returns the checkpoint store of job in dir/checkpoints, keeping 2.
func newStore(t *testing.T, dir, job string) *checkpoint.Store {
	t.Helper()
	ctx := context.Background()
	storage := fsstorage.New()
	if err := storage.Configure(ctx, sdk.Options{"dir": filepath.Join(dir, "checkpoints")}); err != nil {
		t.Fatal(err)
	}
	access, err := storage.CreateCheckpointStorage(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if err := access.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	return checkpoint.NewStore(access, 2)
}

func (f *fixture) conn() jetstream.Conn { return jetstream.Conn{Servers: []string{f.url}} }

func (f *fixture) job(t *testing.T, p int, sink dataflow.Sink) *dataflow.Job {
	t.Helper()
	j, err := jobs.WordCount(jobs.Spec{Name: "wordcount", Parallelism: p, BatchSize: 256,
		Source: &jetstream.Source{Conn: f.conn(), Stream: "TEXT", Bounded: true}, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func (f *fixture) sink() *jetstream.Sink {
	return &jetstream.Sink{Conn: f.conn(), Stream: "COUNTS", Subject: "counts.{key}", Job: "wordcount", BatchSize: 200}
}

func (f *fixture) env(restore *checkpoint.Metadata, onCheckpoint func(*checkpoint.Completed)) dataflow.Env {
	return dataflow.Env{Backend: f.backend, BackendName: "hashmap", Checkpoints: f.store, Restore: restore,
		Interval: 20 * time.Millisecond, Timeout: time.Minute, OnCheckpoint: onCheckpoint}
}

// check reads the output stream back into a part file (each message "word<TAB>count" on
// subject counts.<word>) and checks it with wordcheck against the text's own counts.
func (f *fixture) check(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	st, err := f.js.Stream(ctx, "COUNTS")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(ctx)
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "part-0"))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(out)
	c, err := st.OrderedConsumer(ctx, njs.OrderedConsumerConfig{FilterSubjects: []string{"counts.>"}})
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(0)
	want := info.State.Msgs
	markers, _ := st.Info(ctx, njs.WithSubjectFilter("flowstate.markers.>"))
	for _, k := range markers.State.Subjects {
		want -= k
	}
	for n < want {
		batch, err := c.Fetch(int(min(1000, want-n)), njs.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			n++
			word, _, _ := strings.Cut(string(m.Data()), "\t")
			if m.Subject() != "counts."+word {
				t.Fatalf("record %q on subject %s", m.Data(), m.Subject())
			}
			bw.Write(m.Data())
			bw.WriteByte('\n')
		}
		if batch.Error() != nil {
			t.Fatal(batch.Error())
		}
	}
	bw.Flush()
	out.Close()
	if err := wordcheck.Check(f.expected, dir); err != nil {
		t.Fatal(err)
	}
}

func TestWordCountStreamToStreamIsExact(t *testing.T) {
	f := newFixture(t)
	if err := dataflow.Run(context.Background(), f.job(t, 2, f.sink()), f.env(nil, nil)); err != nil {
		t.Fatal(err)
	}
	f.check(t)
}

// TestWordCountStreamToStreamIsExactAcrossCrashes crashes the job at its first commit,
// before and after the sink commits, restores it from the latest checkpoint at another
// parallelism (source positions, keyed counts and pending transactions redistributed), and
// checks the output stream's exact counts.
func TestWordCountStreamToStreamIsExactAcrossCrashes(t *testing.T) {
	for _, after := range []bool{false, true} {
		t.Run(fmt.Sprintf("after commit %v", after), func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			err := dataflow.Run(ctx, f.job(t, 2, &crashingSink{Sink: f.sink(), after: after}), f.env(nil, nil))
			if !errors.Is(err, errCrash) {
				t.Fatalf("first run: %v, want the injected crash", err)
			}
			latest := f.store.Latest()
			if latest == nil {
				t.Fatal("no checkpoint completed before the crash")
			}
			if err := dataflow.Run(ctx, f.job(t, 3, f.sink()), f.env(latest.Metadata, nil)); err != nil {
				t.Fatalf("restored from checkpoint %d at parallelism 3: %v", latest.Metadata.CheckpointID, err)
			}
			f.check(t)
		})
	}
}
