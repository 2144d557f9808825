package jmstorage

import (
	"io/fs"
	"sort"
	"strconv"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// locState is the life cycle of a location.
type locState int

const (
	locPending locState = iota
	locFinalizing
	locCompleted
	locDisposed
)

// job returns the state of job, creating it. s.mu must be held.
func (s *Storage) job(job string) *jobState {
	j := s.jobs[job]
	if j == nil {
		j = &jobState{shared: make(map[string]struct{}), pending: make(map[*location]struct{})}
		s.jobs[job] = j
	}
	return j
}

// addPending records a new location of a job.
func (s *Storage) addPending(l *location) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.job(l.job).pending[l] = struct{}{}
}

// addBlob stores the bytes of a closed state stream of l and returns their ref.
func (s *Storage) addBlob(l *location, scope sdk.Scope, data []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return "", err
	}
	s.seq++
	segment := l.name
	shared := scope == sdk.ScopeShared && !l.savepoint // savepoints own all their state
	if shared {
		segment = layout.SharedDir
	}
	ref := refScheme + l.job + "/" + segment + "/" + s.epoch + "-" + strconv.FormatUint(s.seq, 10)
	s.blobs[ref] = data
	if shared {
		s.job(l.job).shared[ref] = struct{}{}
	} else {
		l.owned[ref] = struct{}{}
	}
	return ref, nil
}

// blob returns the bytes of ref, if held.
func (s *Storage) blob(ref string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blobs[ref]
	return b, ok
}

// dropBlobs forgets refs. s.mu must be held.
func (s *Storage) dropBlobsLocked(refs []string) {
	for _, ref := range refs {
		delete(s.blobs, ref)
		if p, ok := parseRef(ref); ok && p.location == layout.SharedDir {
			if j := s.jobs[p.job]; j != nil {
				delete(j.shared, ref)
			}
		}
	}
}

// discard forgets the blobs of refs; unknown ones are fine.
func (s *Storage) discard(refs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropBlobsLocked(refs)
}

// beginFinalize moves l to finalizing and returns the blobs its checkpoint file carries:
// the ones it owns plus, for checkpoints, the job's live shared blobs.
func (s *Storage) beginFinalize(l *location) ([]fileBlob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return nil, err
	}
	if _, exists := s.completed[l.pointer()]; exists {
		return nil, errs.New(fs.ErrExist, "checkpoint %q already exists", l.pointer())
	}
	l.state = locFinalizing
	refs := keys(l.owned)
	if !l.savepoint {
		refs = append(refs, keys(s.job(l.job).shared)...)
	}
	blobs := make([]fileBlob, 0, len(refs))
	for _, ref := range refs {
		if b, ok := s.blobs[ref]; ok {
			blobs = append(blobs, fileBlob{ref: ref, data: b})
		}
	}
	sort.Slice(blobs, func(i, j int) bool { return blobs[i].ref < blobs[j].ref })
	return blobs, nil
}

// endFinalize completes l (ok) or puts it back to pending. It reports false when the
// location was disposed meanwhile.
func (s *Storage) endFinalize(l *location, metadata []byte, t time.Time, ok bool) (*checkpoint, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.state == locDisposed {
		return nil, false
	}
	if !ok {
		l.state = locPending
		return nil, true
	}
	l.state = locCompleted
	c := &checkpoint{job: l.job, id: l.id, pointer: l.pointer(), metadata: metadata, time: t, savepoint: l.savepoint, owned: keys(l.owned)}
	s.completed[c.pointer] = c
	l.owned = nil
	delete(s.job(l.job).pending, l)
	return c, true
}

// disposeLocation forgets everything of l, completed or not.
func (s *Storage) disposeLocation(l *location) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.completed[l.pointer()]; c != nil && l.state == locCompleted {
		delete(s.completed, c.pointer)
		s.dropBlobsLocked(c.owned)
	}
	s.dropBlobsLocked(keys(l.owned))
	l.owned = nil
	l.state = locDisposed
	if j := s.jobs[l.job]; j != nil {
		delete(j.pending, l)
	}
}

// abandonPending disposes the job's locations that never completed (a job restarting).
func (s *Storage) abandonPending(job string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[job]
	if j == nil {
		return
	}
	for l := range j.pending {
		s.dropBlobsLocked(keys(l.owned))
		l.owned = nil
		l.state = locDisposed
	}
	clear(j.pending)
}

// completedAt returns the checkpoint held under pointer.
func (s *Storage) completedAt(pointer string) (*checkpoint, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.completed[pointer]
	return c, ok
}

// forget removes the checkpoint held under pointer and frees its blobs.
func (s *Storage) forget(pointer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.completed[pointer]; c != nil {
		delete(s.completed, pointer)
		s.dropBlobsLocked(c.owned)
	}
}

// register adds a checkpoint read from a file, with its blobs, unless one is already held
// under its pointer, and returns the one held.
func (s *Storage) register(c *checkpoint, blobs []fileBlob) *checkpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	if held := s.completed[c.pointer]; held != nil {
		return held
	}
	for _, b := range blobs {
		p, ok := parseRef(b.ref)
		if !ok {
			continue
		}
		if p.location == layout.SharedDir {
			if _, held := s.blobs[b.ref]; !held {
				s.blobs[b.ref] = b.data
				s.job(p.job).shared[b.ref] = struct{}{}
			}
			continue
		}
		s.blobs[b.ref] = b.data
		c.owned = append(c.owned, b.ref)
	}
	s.completed[c.pointer] = c
	return c
}

// checkpointsInMemory returns the job's completed checkpoints (not savepoints) held in
// memory, oldest first.
func (s *Storage) checkpointsInMemory(job string) []*checkpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*checkpoint
	for _, c := range s.completed {
		if c.job == job && !c.savepoint {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// memoryStats reports what the storage holds (for tests).
func (s *Storage) memoryStats() (blobs int, bytes int64, checkpoints int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.blobs {
		bytes += int64(len(b))
	}
	return len(s.blobs), bytes, len(s.completed)
}

// keys returns the keys of a set.
func keys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
