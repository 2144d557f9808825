package checkpoint

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// TestChecksummedLocalStateFiles: over a location that creates local state files, the
// checksumming factory creates them too, and a published file's handle carries the size
// and checksum its writer gave, counted as uploaded; a size the storage disagrees with is
// corrupt. Over a factory without local files it has none either.
func TestChecksummedLocalStateFiles(t *testing.T) {
	ctx := context.Background()
	st := fsstorage.New()
	if err := st.Configure(ctx, sdk.Options{sdk.OptionCheckpointDir: t.TempDir(), sdk.OptionDataInlineThreshold: "0"}); err != nil {
		t.Fatal(err)
	}
	a, err := st.CreateCheckpointStorage(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	loc, err := a.InitializeLocationForCheckpoint(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var uploaded int64
	f, ok := Checksummed(loc, func(n int64) { uploaded += n }).(sdk.LocalStateFactory)
	if !ok {
		t.Fatal("the checksumming factory over fsstorage's location creates no local state files")
	}
	data := []byte("state written by a backend plugin")
	path, err := f.CreateLocalStateFile(ctx, sdk.ScopeShared)
	if err != nil || path == "" {
		t.Fatalf("CreateLocalStateFile = %q, %v", path, err)
	}
	if err := os.WriteFile(path, data, 0); err != nil {
		t.Fatal(err)
	}
	h, err := f.PublishLocalStateFile(ctx, path, sdk.ScopeShared, int64(len(data)), host.Checksum(data))
	if err != nil {
		t.Fatal(err)
	}
	if h.Size != int64(len(data)) || h.Checksum != host.Checksum(data) || uploaded != int64(len(data)) {
		t.Fatalf("handle %+v, %d bytes uploaded; want %d bytes with CRC %08x, all uploaded", h, uploaded, len(data), host.Checksum(data))
	}
	got, err := Reader{Access: a}.ReadAll(ctx, h)
	if err != nil || string(got) != string(data) {
		t.Fatalf("reading the published file back: %q, %v", got, err)
	}
	path, err = f.CreateLocalStateFile(ctx, sdk.ScopeExclusive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.PublishLocalStateFile(ctx, path, sdk.ScopeExclusive, 1, 0); !errors.Is(err, sdk.ErrCorrupt) {
		t.Fatalf("publishing an empty file as 1 byte: %v, want an error wrapping sdk.ErrCorrupt", err)
	}
	if _, ok := Checksummed(struct{ sdk.CheckpointStreamFactory }{loc}, nil).(sdk.LocalStateFactory); ok {
		t.Fatal("the checksumming factory over a factory without local files creates some")
	}
}
