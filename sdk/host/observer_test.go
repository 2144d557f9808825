package host_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
	"github.com/flowstate/flowstate/sdk/internal/testplugins/memstore"
)

// recorder is a host.CallObserver that counts what it sees, per method.
type recorder struct {
	mu       sync.Mutex
	ended    sync.Cond // broadcast when a call ends
	sent     map[string]int
	received map[string]int
	done     map[string][]error
}

func newRecorder() *recorder {
	r := &recorder{sent: map[string]int{}, received: map[string]int{}, done: map[string][]error{}}
	r.ended.L = &r.mu
	return r
}

func (r *recorder) CallDone(method string, took time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if took < 0 {
		err = fmt.Errorf("negative duration %v (call error: %v)", took, err)
	}
	r.done[method] = append(r.done[method], err)
	r.ended.Broadcast()
}

// awaitDone returns once n calls of method have ended.
func (r *recorder) awaitDone(method string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.done[method]) < n {
		r.ended.Wait()
	}
}

func (r *recorder) Message(method string, sent bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sent {
		r.sent[method]++
	} else {
		r.received[method]++
	}
}

// counts returns the messages sent and received and the calls ended of method, and the
// errors of those calls.
func (r *recorder) counts(method string) (sent, received int, errs []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[method], r.received[method], append([]error(nil), r.done[method]...)
}

// methods returns every method seen.
func (r *recorder) methods() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, m := range []map[string]int{r.sent, r.received} {
		for k := range m {
			seen[k] = true
		}
	}
	for k := range r.done {
		seen[k] = true
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	return out
}

func observed(r *recorder) func(*host.Config) {
	return func(c *host.Config) { c.Observer = r }
}

// TestObserverSeesCallsAndMessages: a unary call is one message each way and one call
// ended; a stream of N writes is N messages each way and one call, ended when the stream
// is; a failed call ends with its error; go-plugin's own services are not reported.
func TestObserverSeesCallsAndMessages(t *testing.T) {
	rec := newRecorder()
	p := startPlugin(t, "mem", observed(rec))
	if sent, received, errs := rec.counts("Info/Describe"); sent != 1 || received != 1 || len(errs) != 1 || errs[0] != nil {
		t.Errorf("Info/Describe at start: %d sent, %d received, ended %v; want 1, 1, [nil]", sent, received, errs)
	}
	kb := newKeyed(t, p, allGroups)
	if sent, received, errs := rec.counts("StateBackend/CreateKeyedBackend"); sent != 1 || received != 1 || len(errs) != 1 || errs[0] != nil {
		t.Errorf("StateBackend/CreateKeyedBackend: %d sent, %d received, ended %v; want 1, 1, [nil]", sent, received, errs)
	}
	pw, ok := kb.(host.PipelinedWriter)
	if !ok {
		t.Fatal("the keyed backend of a plugin of this SDK is no host.PipelinedWriter")
	}
	const n = 5
	ctx := ctxT(t)
	var waits []func() error
	for i := range n {
		waits = append(waits, pw.StartWrite(ctx, []sdk.Mutation{{Key: key(1, "k"), Value: []byte{byte('0' + i)}}}))
	}
	for i, w := range waits {
		if err := w(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if _, _, errs := rec.counts("StateBackend/Pipeline"); len(errs) != 0 {
		t.Errorf("the pipeline ended before Close: %v", errs)
	}
	if err := kb.Close(); err != nil {
		t.Fatal(err)
	}
	if sent, received, errs := rec.counts("StateBackend/Pipeline"); sent != n || received != n || len(errs) != 1 || errs[0] != nil {
		t.Errorf("StateBackend/Pipeline: %d sent, %d received, ended %v; want %d, %d, [nil]", sent, received, errs, n, n)
	}
	_, err := newKeyed(t, p, allGroups).Get(ctx, [][]byte{memstore.PanicKey})
	if err == nil {
		t.Fatal("Get of the panic key succeeded")
	}
	if sent, received, errs := rec.counts("StateBackend/Get"); sent != 1 || received != 0 || len(errs) != 1 || errs[0] == nil || !strings.Contains(errs[0].Error(), "panicked") {
		t.Errorf("failed StateBackend/Get: %d sent, %d received, ended %v; want 1, 0, [the panic's error]", sent, received, errs)
	}
	for _, m := range rec.methods() {
		if s, _, _ := strings.Cut(m, "/"); s != "Info" && s != "StateBackend" && s != "CheckpointStorage" {
			t.Errorf("observer saw %q, which is not a method of the plugin protocol", m)
		}
	}
}

// TestObserverSeesStreamsTheHostAbandons: a stream the host stops reading (it closes a
// state reader before the end) ends, for the observer, with its context.
func TestObserverSeesStreamsTheHostAbandons(t *testing.T) {
	rec := newRecorder()
	p := startPlugin(t, "mem", observed(rec))
	storage, _ := p.CheckpointStorage()
	ctx := ctxT(t)
	access, err := storage.CreateCheckpointStorage(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	defer access.Close()
	loc, err := access.InitializeLocationForCheckpoint(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	out, err := loc.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.Write(make([]byte, 3<<20)); err != nil {
		t.Fatal(err)
	}
	h, err := out.CloseAndGetHandle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sent, received, errs := rec.counts("CheckpointStorage/WriteState"); sent != 4 || received != 1 || len(errs) != 1 || errs[0] != nil {
		t.Errorf("CheckpointStorage/WriteState of 3 MiB: %d sent, %d received, ended %v; want an open and 3 chunks, 1 handle, [nil]", sent, received, errs)
	}
	rc, err := access.OpenState(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	rec.awaitDone("CheckpointStorage/OpenState", 1) // the host cancels the call: the report follows
	_, _, errs := rec.counts("CheckpointStorage/OpenState")
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("CheckpointStorage/OpenState closed early ended %v; want [context canceled]", errs)
	}
}
