package disaggregated

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	goleveldb "github.com/syndtr/goleveldb/leveldb"

	"github.com/flowstate/flowstate/sdk"
)

// part is one database of a keyed backend and the key groups it holds. A keyed backend
// has one part for its whole range, unless it restored in place the checkpoints of
// several subtasks of another parallelism: then each restored database is a part, for the
// key groups of the backend its checkpoint came from that the backend owns (and a fresh
// database for the key groups none of them had). Each part is the only one to hold its
// key groups; the keys of other key groups its database may still hold (restored from a
// subtask that owned more) are never read: Get, Scan and snapshots see a part only
// within its range, and compactions carry those keys along unread.
type part struct {
	kgs sdk.KeyGroupRange
	dir string
	db  *goleveldb.DB
	st  *store
}

// lo and hi are the bounds of the keys of p's key groups: [lo, hi).
func (p *part) lo() []byte { return sdk.KeyGroupPrefix(p.kgs.Start) }
func (p *part) hi() []byte { return sdk.KeyGroupPrefix(p.kgs.End) }

// clamp returns the part of [start, end) within p's keys (an empty end is no bound), and
// false when none is.
func (p *part) clamp(start, end []byte) ([]byte, []byte, bool) {
	lo, hi := p.lo(), p.hi()
	if bytes.Compare(start, lo) > 0 {
		lo = start
	}
	if len(end) > 0 && bytes.Compare(end, hi) < 0 {
		hi = end
	}
	return lo, hi, bytes.Compare(lo, hi) < 0
}

// close closes p's database and store and removes its directory.
func (p *part) close(name string) error {
	var errs []error
	if err := p.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("%s: close database in %s: %w", name, p.dir, err))
	}
	if err := p.st.Close(); err != nil {
		errs = append(errs, fmt.Errorf("%s: close storage of %s: %w", name, p.dir, err))
	}
	if err := os.RemoveAll(p.dir); err != nil {
		errs = append(errs, fmt.Errorf("%s: remove %s: %w", name, p.dir, err))
	}
	return errors.Join(errs...)
}

// partOf returns the part holding key group g, nil when none does.
func (kb *keyed) partOf(g int) *part {
	for _, p := range kb.parts {
		if p.kgs.Contains(g) {
			return p
		}
	}
	return nil
}

// openPart opens a part for key groups kgs in a new directory: an empty database, or, with
// l, the database l lays out, whose tables are restored (see openDB).
func (kb *keyed) openPart(kgs sdk.KeyGroupRange, l *layout, restored func(*store) ([]*table, error)) (*part, error) {
	p := kb.params
	id := fmt.Sprintf("%s-%d-%s", pathElem(p.OperatorID), p.Subtask, randomSuffix())
	dir := filepath.Join(kb.jobDir, id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create directory %s: %w", dir, err)
	}
	db, st, err := openDB(dir, kb.remote, kb.cache, pathElem(p.JobID)+"/"+id+"/", l, restored, kb.cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &part{kgs: kgs, dir: dir, db: db, st: st}, nil
}

// openDB opens a database in dir on a store over remote and c whose new tables are named
// prefix<number>.ldb. With l it lays out l's manifest and journals first, and the store
// starts with the tables restored returns (given the new store, which a table restored
// from a copy is written back to).
func openDB(dir string, remote Remote, c *cache, prefix string, l *layout, restored func(*store) ([]*table, error), cfg config) (*goleveldb.DB, *store, error) {
	if l != nil {
		if err := l.writeLocal(dir); err != nil {
			return nil, nil, err
		}
	}
	st, err := newStore(dir, remote, c, prefix)
	if err != nil {
		return nil, nil, err
	}
	if l != nil {
		if restored != nil {
			tables, err := restored(st)
			st.addRestored(tables) // on a failure too, so that Close deletes what was written back
			if err != nil {
				st.Close()
				return nil, nil, err
			}
		}
		if err := st.SetMeta(l.manifestFd()); err != nil {
			st.Close()
			return nil, nil, fmt.Errorf("restore manifest in %s: %w", dir, err)
		}
	}
	db, err := goleveldb.Open(st, dbOptions(cfg))
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("open database in %s: %w", dir, storageCause(err))
	}
	return db, st, nil
}
