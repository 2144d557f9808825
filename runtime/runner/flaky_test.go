package runner_test

import (
	"context"
	"errors"
	"sync"

	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/optional"
)

// flakyStorage is fsstorage whose checkpoints with an id divisible by 3 fail half way:
// their first state stream uploads, every later one fails to open.
type flakyStorage struct {
	*fsstorage.Storage
	mu    sync.Mutex
	fails int
}

func (s *flakyStorage) failed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fails
}

func (s *flakyStorage) CreateCheckpointStorage(ctx context.Context, jobID string) (sdk.CheckpointStorageAccess, error) {
	a, err := s.Storage.CreateCheckpointStorage(ctx, jobID)
	if err != nil {
		return nil, err
	}
	w := &flakyAccess{CheckpointStorageAccess: a, s: s}
	return optional.Access(w, optional.AccessInterfacesOf(w, a)), nil
}

type flakyAccess struct {
	sdk.CheckpointStorageAccess
	s *flakyStorage
}

func (a *flakyAccess) InitializeLocationForCheckpoint(ctx context.Context, id int64) (sdk.CheckpointStorageLocation, error) {
	loc, err := a.CheckpointStorageAccess.InitializeLocationForCheckpoint(ctx, id)
	if err != nil || id%3 != 0 {
		return loc, err
	}
	return &flakyLocation{CheckpointStorageLocation: loc, s: a.s}, nil
}

type flakyLocation struct {
	sdk.CheckpointStorageLocation
	s      *flakyStorage
	mu     sync.Mutex
	opened int
}

func (l *flakyLocation) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	l.mu.Lock()
	l.opened++
	first := l.opened == 1
	l.mu.Unlock()
	if first {
		return l.CheckpointStorageLocation.CreateCheckpointStateOutputStream(ctx, scope)
	}
	l.s.mu.Lock()
	l.s.fails++
	l.s.mu.Unlock()
	return nil, errors.New("flaky storage: injected failure")
}
