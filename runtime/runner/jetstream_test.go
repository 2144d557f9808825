package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/runner"
	"github.com/flowstate/flowstate/runtime/state"
)

// visits is the custom job's record: a page and how often it was visited so far. Its key
// goes into the sink's subject template.
type visits struct {
	Page string
	N    int64
}

func (v visits) Key() string    { return v.Page }
func (v visits) String() string { return v.Page + "\t" + strconv.FormatInt(v.N, 10) }

// pageVisits is a custom job: per page of "page user" lines, the running count of visits.
func pageVisits(env *runner.Environment) (*dataflow.Job, error) {
	src, err := env.JetStreamSource()
	if err != nil {
		return nil, err
	}
	if src.Logger == nil { // what it skips must be logged, as its keys say
		return nil, fmt.Errorf("the environment's JetStream source has no logger")
	}
	job := dataflow.NewJob("pagevisits")
	sink, err := env.JetStreamSink(job.Name)
	if err != nil {
		return nil, err
	}
	job.Parallelism = 2
	lines := dataflow.FromSource[string](job, "visits", src)
	pages := dataflow.Map(lines, func(line string) string { page, _, _ := strings.Cut(line, " "); return page })
	count := state.NewValue("count", state.Int64)
	byPage := dataflow.KeyBy(pages, func(p string) []byte { return []byte(p) })
	out := dataflow.Process(byPage, "count", []state.Descriptor{count}, func(kc *dataflow.KeyedContext, p string, emit func(visits)) error {
		n, _, err := count.Get(kc.State())
		if err != nil {
			return err
		}
		if err := count.Update(kc.State(), n+1); err != nil {
			return err
		}
		emit(visits{p, n + 1})
		return nil
	})
	dataflow.SinkTo(out, sink)
	return job, nil
}

// runPageVisits is what a custom job's main does to read a JetStream stream and write
// another exactly once, both as the configuration file says (nats.servers,
// source.jetstream.*, sink.jetstream.*): build the environment, the job, and execute it.
// adjust, if set, changes the environment before the job is built (the test runs the
// plugins in-process).
func runPageVisits(ctx context.Context, configFile string, adjust func(*runner.Environment)) error {
	env, err := runner.NewEnvironment(configFile)
	if err != nil {
		return err
	}
	if adjust != nil {
		adjust(env)
	}
	job, err := pageVisits(env)
	if err != nil {
		return err
	}
	return env.Execute(ctx, job, runner.FromLatestIfAny)
}

// TestCustomJobReadsAndWritesJetStream runs the example's job through Environment.Execute
// against an in-process NATS server and checks every page's counts 1..N on the output
// stream, N counted from the input as published.
func TestCustomJobReadsAndWritesJetStream(t *testing.T) {
	o := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true}
	srv, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "VISITS", Subjects: []string{"visits.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PAGES", Subjects: []string{"pages.>", "flowstate.markers.>"}, AllowAtomicPublish: true}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for i := 0; i < 600; i++ {
		page := fmt.Sprintf("p%d", (i*i)%17)
		want[page]++
		if _, err := js.Publish(ctx, fmt.Sprintf("visits.site%d", i%3), []byte(page+" u"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "flowstate.yaml")
	conf := fmt.Sprintf("nats.servers: %s\nsource.jetstream.stream: VISITS\nsource.jetstream.bounded: true\n"+
		"sink.jetstream.stream: PAGES\nsink.jetstream.subject: pages.{key}\n", srv.ClientURL())
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a bound, not a wait
	defer cancel()
	err = runPageVisits(runCtx, file, func(env *runner.Environment) {
		env.UseInProcess(builtin.Constructors())
		env.SetLogger(hclog.NewNullLogger())
		env.CheckpointConfig().SetCheckpointStorage(filepath.Join(dir, "checkpoints"))
		env.CheckpointConfig().SetCheckpointInterval(50 * time.Millisecond)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Read the output back by sequence: per page, the counts seen.
	st, err := js.Stream(ctx, "PAGES")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(ctx)
	got := map[string][]string{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if page, ok := strings.CutPrefix(m.Subject, "pages."); ok {
			got[page] = append(got[page], string(m.Data))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("output has %d pages, the input %d", len(got), len(want))
	}
	for page, n := range want {
		if len(got[page]) != n {
			t.Fatalf("page %s: %d records, want %d", page, len(got[page]), n)
		}
		seen := map[string]bool{}
		for _, rec := range got[page] {
			seen[rec] = true
		}
		for i := 1; i <= n; i++ {
			if !seen[fmt.Sprintf("%s\t%d", page, i)] {
				t.Fatalf("page %s: no record of count %d in %q", page, i, got[page])
			}
		}
	}
}
