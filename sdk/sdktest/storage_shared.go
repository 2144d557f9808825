package sdktest

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// sharedListChecks tests the optional sdk.SharedStateLister, when the storage's access
// implements it: a job's shared streams are listed by the refs their handles carry,
// completed or not; exclusive ones and other jobs' are not; discarded ones disappear.
func sharedListChecks(t *testing.T, factory StorageFactory) {
	ctx := context.Background()
	cs := factory(t)
	a := openAccess(t, cs, "shared-list")
	l, ok := a.(sdk.SharedStateLister)
	if !ok {
		t.Logf("the access (%T) does not implement the optional sdk.SharedStateLister: nothing to check", a)
		return
	}
	if got, err := l.ListSharedState(ctx); err != nil || len(got) != 0 {
		t.Fatalf("ListSharedState of a new job = %v, %v; want nothing", got, err)
	}
	// Larger than any inline threshold (at most 1 MiB), so the streams get refs.
	const size = 1<<20 + 1
	write := func(loc sdk.CheckpointStorageLocation, scope sdk.Scope, fill byte) sdk.StreamStateHandle {
		t.Helper()
		out, err := loc.CreateCheckpointStateOutputStream(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := out.Write(bytes.Repeat([]byte{fill}, size)); err != nil {
			t.Fatal(err)
		}
		h, err := out.CloseAndGetHandle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	loc := checkpointLocation(t, a, 1)
	var want []string
	for i, scope := range []sdk.Scope{sdk.ScopeShared, sdk.ScopeExclusive, sdk.ScopeShared} {
		if h := write(loc, scope, byte(i)); scope == sdk.ScopeShared {
			want = append(want, h.Ref)
		}
	}
	write(checkpointLocation(t, openAccess(t, cs, "shared-list-other"), 1), sdk.ScopeShared, 9)
	got, err := l.ListSharedState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, h := range got {
		if h.Scope != sdk.ScopeShared || h.Size != size {
			t.Fatalf("listed handle %+v: want a shared stream of %d bytes", h, size)
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
