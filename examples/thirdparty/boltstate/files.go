package boltstate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/flowstate/flowstate/sdk"
)

// lockTimeout bounds the wait for a checkpoint file that another process holds open
// (bbolt locks its files with flock): a runner restarted while its previous plugin process
// is still exiting waits for it, briefly. boltFS opens a file for each operation, so
// another process waits for one operation at most.
const lockTimeout = 10 * time.Second

// files shares the open checkpoint files of the process. bbolt allows one open handle per
// file and process (a second Open of the same file waits for the first one's lock), so
// every user of a checkpoint file goes through acquire and gets the same *bolt.DB.
var files = struct {
	sync.Mutex
	open map[string]*sharedFile
}{open: map[string]*sharedFile{}}

type sharedFile struct {
	db   *bolt.DB
	refs int
}

// acquire opens the checkpoint file at path, or returns the handle already open, and the
// function that releases it; the file is closed when its last user releases it. Unless
// create is set, a missing file is an error wrapping fs.ErrNotExist.
func acquire(path string, create bool) (*bolt.DB, func(), error) {
	files.Lock()
	defer files.Unlock()
	f, ok := files.open[path]
	if !ok {
		if !create {
			if _, err := os.Stat(path); err != nil {
				if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
					return nil, nil, notExist("open", path)
				}
				return nil, nil, fmt.Errorf("checkpoint file %s: %w", path, err)
			}
		} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, nil, fmt.Errorf("create directory of checkpoint file %s: %w", path, err)
		}
		db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: lockTimeout, FreelistType: bolt.FreelistMapType})
		if err != nil {
			return nil, nil, openError(path, err)
		}
		if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucketTree); return err }); err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("checkpoint file %s: create buckets: %w", path, err)
		}
		f = &sharedFile{db: db}
		files.open[path] = f
	}
	f.refs++
	var once sync.Once
	release := func() {
		once.Do(func() {
			files.Lock()
			defer files.Unlock()
			f.refs--
			if f.refs == 0 {
				delete(files.open, path)
				if err := f.db.Close(); err != nil {
					sdk.Logger().Warn("closing checkpoint file", "file", path, "error", err)
				}
			}
		})
	}
	return f.db, release, nil
}

// openError explains why bbolt could not open path.
func openError(path string, err error) error {
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return fmt.Errorf("checkpoint file %s is locked by another process (waited %v): %w", path, lockTimeout, err)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrVersionMismatch), errors.Is(err, bolterrors.ErrChecksum):
		return fmt.Errorf("checkpoint file %s is not a readable bbolt file: %w: %w", path, sdk.ErrCorrupt, err)
	default:
		return fmt.Errorf("open checkpoint file %s: %w", path, err)
	}
}
