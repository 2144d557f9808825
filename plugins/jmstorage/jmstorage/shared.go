package jmstorage

import (
	"context"
	"sort"

	"github.com/flowstate/flowstate/sdk"
)

var _ sdk.SharedStateLister = (*access)(nil)

// ListSharedState implements sdk.SharedStateLister: the job's shared blobs this process
// holds, by ref. (With a dir, checkpoint files keep their own copies of the shared blobs
// they may reference, so discarding a listed blob never damages a completed checkpoint.)
func (a *access) ListSharedState(_ context.Context) ([]sdk.StreamStateHandle, error) {
	return a.st.sharedBlobs(a.jobID), nil
}

// sharedBlobs returns handles of the shared blobs of job, sorted by ref.
func (s *Storage) sharedBlobs(job string) []sdk.StreamStateHandle {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[job]
	if j == nil {
		return nil
	}
	out := make([]sdk.StreamStateHandle, 0, len(j.shared))
	for ref := range j.shared {
		out = append(out, sdk.StreamStateHandle{Ref: ref, Size: int64(len(s.blobs[ref])), Scope: sdk.ScopeShared})
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Ref < out[k].Ref })
	return out
}
