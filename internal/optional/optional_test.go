package optional

import (
	"context"
	"errors"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

type (
	bare    struct{ sdk.CheckpointStorageAccess }
	lister  struct{ sdk.SharedStateLister }
	leaser  struct{ sdk.LeaseStore }
	locator struct{ sdk.LocalStateLocator }
)

type namedLease string

func (n namedLease) ReadLease(context.Context) (sdk.LeaseRecord, error) {
	return sdk.LeaseRecord{Data: []byte(n), Version: "1"}, nil
}

func (n namedLease) WriteLease(context.Context, []byte, string) (string, error) { return "", nil }

// TestAccessKeepsExactlyTheInnerInterfaces wraps accesses with every combination of the
// optional interfaces: the result has those of the inner access and no other.
func TestAccessKeepsExactlyTheInnerInterfaces(t *testing.T) {
	for bits := 0; bits < 8; bits++ {
		var inner sdk.CheckpointStorageAccess = bare{}
		switch bits {
		case 1:
			inner = struct {
				bare
				lister
			}{}
		case 2:
			inner = struct {
				bare
				leaser
			}{}
		case 3:
			inner = struct {
				bare
				lister
				leaser
			}{}
		case 4:
			inner = struct {
				bare
				locator
			}{}
		case 5:
			inner = struct {
				bare
				lister
				locator
			}{}
		case 6:
			inner = struct {
				bare
				leaser
				locator
			}{}
		case 7:
			inner = struct {
				bare
				lister
				leaser
				locator
			}{}
		}
		got := Access(bare{inner}, inner)
		_, l := got.(sdk.SharedStateLister)
		_, s := got.(sdk.LeaseStore)
		_, c := got.(sdk.LocalStateLocator)
		if l != (bits&1 != 0) || s != (bits&2 != 0) || c != (bits&4 != 0) {
			t.Errorf("inner with interfaces %03b: the wrapped access lists %v, leases %v, locates %v", bits, l, s, c)
		}
	}
}

// overridingLease is a wrapper with a lease of its own.
type overridingLease struct {
	sdk.CheckpointStorageAccess
	namedLease
}

// TestAccessPrefersTheWrappersMethods: a wrapper that implements an optional interface
// itself answers it; the others come from the inner access.
func TestAccessPrefersTheWrappersMethods(t *testing.T) {
	inner := struct {
		bare
		lister
		leaser
	}{leaser: leaser{namedLease("inner")}}
	got := Access(overridingLease{bare{inner}, "wrapper"}, inner)
	r, err := got.(sdk.LeaseStore).ReadLease(context.Background())
	if err != nil || string(r.Data) != "wrapper" {
		t.Fatalf("lease read %q, %v; want the wrapper's", r.Data, err)
	}
	if _, ok := got.(sdk.SharedStateLister); !ok {
		t.Fatalf("the inner access's lister was dropped")
	}
	inner.leaser = leaser{namedLease("inner")}
	r, _ = Access(bare{inner}, inner).(sdk.LeaseStore).ReadLease(context.Background())
	if string(r.Data) != "inner" {
		t.Fatalf("lease read %q; want the inner access's", r.Data)
	}
}

// pipelined is a keyed backend with a pipeline that would bypass a wrapper's faults.
type pipelined struct {
	sdk.KeyedStateBackend
	writes int
}

func (p *pipelined) Write(context.Context, []sdk.Mutation) error { p.writes++; return nil }
func (p *pipelined) StartWrite(context.Context, []sdk.Mutation) func() error {
	panic("the inner pipeline was used: the wrapper's faults would not apply")
}
func (p *pipelined) StartRead(context.Context, [][]byte) func() ([][]byte, error) {
	panic("the inner pipeline was used")
}

// failSecond fails the second write it sees.
type failSecond struct {
	sdk.KeyedStateBackend
	n int
}

func (f *failSecond) Write(ctx context.Context, m []sdk.Mutation) error {
	if f.n++; f.n == 2 {
		return errors.New("injected")
	}
	return f.KeyedStateBackend.Write(ctx, m)
}

// TestKeyedPipelinesThroughTheWrapper: over a backend with a pipeline the wrapped backend
// has one too, whose writes go through the wrapper's Write and stop after a failure.
func TestKeyedPipelinesThroughTheWrapper(t *testing.T) {
	inner := &pipelined{}
	got := Keyed(&failSecond{KeyedStateBackend: inner}, inner)
	pw, ok := got.(host.PipelinedWriter)
	if !ok {
		t.Fatal("the pipeline of the inner backend was dropped")
	}
	ctx := context.Background()
	var errs []error
	for range 3 {
		errs = append(errs, pw.StartWrite(ctx, nil)())
	}
	if errs[0] != nil || errs[1] == nil || errs[2] == nil || inner.writes != 1 {
		t.Fatalf("write outcomes %v with %d applied; want ok, the injected failure twice, 1 applied", errs, inner.writes)
	}
	if _, ok := Keyed(&failSecond{}, &failSecond{}).(host.PipelinedWriter); ok {
		t.Fatal("a backend without a pipeline got one")
	}
}
