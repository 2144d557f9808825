package disaggregated

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/syndtr/goleveldb/leveldb/storage"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// FormatDisaggregated is the format of the handles of checkpoints: the database in place
// on the remote store.
//
// A handle of this format has KeyGroups, the key groups of the keyed backend that wrote
// it, and one exclusive stream named "layout": a kvstream (package sdk/kvstream) whose
// records are
//
//	"remote"                   the remote store's URI
//	"manifest/<number>"        the bytes of goleveldb's manifest MANIFEST-<number>, up to its
//	                           last whole record when the snapshot was taken
//	"journal/<number>"         the bytes of journal <number>.log (the memtables)
//	"table/<number>"           a JSON object {"num", "object", "size", "crc32c", "remote",
//	                           "file", "copied"}: table <number>.ldb is the object "object"
//	                           of the store "remote" (the layout's when absent), of "size"
//	                           bytes and that CRC-32C; "file" names the handle's shared
//	                           file that references it: the object itself, adopted in place
//	                           by the checkpoint storage (sdk.RemoteFileAdopter), or, when
//	                           "copied", a copy of its bytes. The tables listed are a
//	                           superset of those the manifest references.
//
// The handle's other files are those shared files, one per table, named "table/<number>".
// Restoring lays out the manifest and journals in a new directory and opens the database
// with its tables where they are; a copied table is first written back to the restoring
// backend's remote store from its copy. A record without "file" (written before tables
// had handles) names a table only its object holds. Meta is a small JSON object, for people
// reading checkpoint metadata: {"checkpoint", "tables", "table_bytes", "remote"}.
const FormatDisaggregated = "disaggregated-v1"

// layoutFile is the name of the one stream of a FormatDisaggregated handle.
const layoutFile = "layout"

// tableInfo is what a snapshot lists of a table (see FormatDisaggregated).
type tableInfo struct {
	Num    int64  `json:"num"`
	Object string `json:"object"`
	Size   int64  `json:"size"`
	CRC    uint32 `json:"crc32c"`
	Remote string `json:"remote,omitempty"`
	File   string `json:"file,omitempty"`
	Copied bool   `json:"copied,omitempty"`
	remote Remote // where Object is, while the snapshot is written
}

// layout is what a FormatDisaggregated handle holds.
type layout struct {
	remote      string
	manifestNum int64
	manifest    []byte
	journals    map[int64][]byte
	tables      []tableInfo
}

// write writes l as a kvstream to w and closes w.
func (l *layout) write(w *kvstream.Writer) error {
	if err := w.Write([]byte("remote"), []byte(l.remote)); err != nil {
		return err
	}
	if err := w.Write([]byte("manifest/"+strconv.FormatInt(l.manifestNum, 10)), l.manifest); err != nil {
		return err
	}
	nums := make([]int64, 0, len(l.journals))
	for n := range l.journals {
		nums = append(nums, n)
	}
	sort.Slice(nums, func(i, j int) bool { return nums[i] < nums[j] })
	for _, n := range nums {
		if err := w.Write([]byte("journal/"+strconv.FormatInt(n, 10)), l.journals[n]); err != nil {
			return err
		}
	}
	for _, t := range l.tables {
		if t.remote != nil && t.remote.String() != l.remote {
			t.Remote = t.remote.String()
		}
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		if err := w.Write([]byte("table/"+strconv.FormatInt(t.Num, 10)), b); err != nil {
			return err
		}
	}
	return w.Close()
}

// readLayout reads a layout stream.
func readLayout(r io.Reader) (*layout, error) {
	l := &layout{journals: map[int64][]byte{}, manifestNum: -1}
	kr := kvstream.NewReader(bufio.NewReaderSize(r, 64<<10))
	for {
		k, v, err := kr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		kind, num, _ := strings.Cut(string(k), "/")
		n, nerr := strconv.ParseInt(num, 10, 64)
		switch {
		case kind == "remote" && num == "":
			l.remote = string(v)
		case nerr != nil || n < 0:
			return nil, fmt.Errorf("layout record %q: %w", k, sdk.ErrCorrupt)
		case kind == "manifest":
			l.manifestNum, l.manifest = n, v
		case kind == "journal":
			l.journals[n] = v
		case kind == "table":
			var t tableInfo
			if err := json.Unmarshal(v, &t); err != nil || t.Num != n || t.Object == "" || t.Copied && t.File == "" {
				return nil, fmt.Errorf("layout record %q: %q: %w", k, v, sdk.ErrCorrupt)
			}
			l.tables = append(l.tables, t)
		default:
			return nil, fmt.Errorf("layout record %q: unknown: %w", k, sdk.ErrCorrupt)
		}
	}
	if l.remote == "" || l.manifestNum < 0 {
		return nil, fmt.Errorf("layout without a remote store or a manifest: %w", sdk.ErrCorrupt)
	}
	return l, nil
}

// manifestFd is the goleveldb file of l's manifest.
func (l *layout) manifestFd() storage.FileDesc {
	return storage.FileDesc{Type: storage.TypeManifest, Num: l.manifestNum}
}

// writeLocal writes l's manifest and journals into dir.
func (l *layout) writeLocal(dir string) error {
	files := map[string][]byte{l.manifestFd().String(): l.manifest}
	for n, b := range l.journals {
		files[storage.FileDesc{Type: storage.TypeJournal, Num: n}.String()] = b
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("restore %s: %w", name, err)
		}
	}
	return nil
}
