package jmstorage_test

import (
	"context"
	"slices"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/plugins/jmstorage/jmstorage"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// TestListSharedState checks sdk.SharedStateLister in-process and through the plugin
// protocol: shared streams are listed by the refs their handles carry, completed or not,
// exclusive ones and other jobs' are not, and discarded ones disappear.
func TestListSharedState(t *testing.T) {
	opts := func(t *testing.T) sdk.Options {
		return sdk.Options{sdk.OptionDataInlineThreshold: "0"}
	}
	t.Run("in-process", func(t *testing.T) {
		s := jmstorage.New()
		if err := s.Configure(context.Background(), opts(t)); err != nil {
			t.Fatal(err)
		}
		checkListSharedState(t, s)
	})
	t.Run("process", func(t *testing.T) {
		checkListSharedState(t, sdktest.ProcessCheckpointStorage(t, testbin.Plugin(t, "jmstorage"), opts(t)))
	})
}

func checkListSharedState(t *testing.T, s sdk.CheckpointStorage) {
	ctx := context.Background()
	access := func(job string) sdk.SharedStateLister {
		a, err := s.CreateCheckpointStorage(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		if err := a.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
			t.Fatal(err)
		}
		l, ok := a.(sdk.SharedStateLister)
		if !ok {
			t.Fatalf("the access (%T) does not implement sdk.SharedStateLister", a)
		}
		return l
	}
	l := access("job")
	a := l.(sdk.CheckpointStorageAccess)
	if got, err := l.ListSharedState(ctx); err != nil || len(got) != 0 {
		t.Fatalf("ListSharedState of a new job = %v, %v; want nothing", got, err)
	}
	loc, err := a.InitializeLocationForCheckpoint(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, scope := range []sdk.Scope{sdk.ScopeShared, sdk.ScopeExclusive, sdk.ScopeShared} {
		out, err := loc.CreateCheckpointStateOutputStream(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		out.Write([]byte{byte(i), 1, 2, 3})
		h, err := out.CloseAndGetHandle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if scope == sdk.ScopeShared {
			want = append(want, h.Ref)
		}
	}
	other := access("other-job").(sdk.CheckpointStorageAccess)
	otherLoc, err := other.InitializeLocationForCheckpoint(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := otherLoc.CreateCheckpointStateOutputStream(ctx, sdk.ScopeShared)
	out.Write([]byte("other"))
	if _, err := out.CloseAndGetHandle(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := l.ListSharedState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, h := range got {
		if h.Scope != sdk.ScopeShared || h.Size != 4 {
			t.Fatalf("listed handle %+v: want a shared stream of 4 bytes", h)
		}
		refs = append(refs, h.Ref)
	}
	slices.Sort(refs)
	slices.Sort(want)
	if !slices.Equal(refs, want) {
		t.Fatalf("ListSharedState = %v, want the job's shared streams %v", refs, want)
	}
	if err := a.DiscardState(ctx, got[:1]); err != nil {
		t.Fatal(err)
	}
	if got, err = l.ListSharedState(ctx); err != nil || len(got) != len(want)-1 {
		t.Fatalf("after discarding one: ListSharedState = %v, %v; want %d handles", got, err, len(want)-1)
	}
}
