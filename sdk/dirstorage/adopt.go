package dirstorage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// Adopted files (sdk.RemoteFileAdopter). A file a backend keeps on the medium of the
// checkpoint directory (a local file when the directory is local, an object of the FS's own
// URIs when it is one) is taken over in place: the access records it with a marker file in
// <dir>/<job>/shared/, named adoptedPrefix and a hash of the file's ref, which holds that
// ref. The handle's Ref is the file's own ref (its URI), so OpenState and
// LocalStatePath read it where it is; DiscardState deletes a file with a marker, then the
// marker, wherever the file is; ListSharedState lists it by its marker. Files on another
// medium are refused with sdk.ErrUnsupported: an adopted file must be as durable as the
// checkpoints that reference it.
const (
	// adoptedPrefix starts the name of an adopted file's marker.
	adoptedPrefix = "adopted-"
	// adoptingPrefix starts the name of a marker being written (listed, and cleaned up
	// with the shared state no checkpoint references, should a crash leave one).
	adoptingPrefix = ".adopting-"
)

var _ sdk.RemoteFileAdopter = (*access)(nil)

// AdoptRemoteFiles implements sdk.RemoteFileAdopter (see adoptedPrefix).
func (a *access) AdoptRemoteFiles(_ context.Context, files []sdk.StreamStateHandle) ([]sdk.StreamStateHandle, error) {
	out := make([]sdk.StreamStateHandle, len(files))
	for i, f := range files {
		name, err := a.adoptable(f)
		if err != nil {
			return nil, err
		}
		ref := a.s.ref(name)
		if err := a.writeMarker(ref); err != nil {
			return nil, err
		}
		out[i] = sdk.StreamStateHandle{Ref: ref, Size: f.Size, Scope: sdk.ScopeShared, Checksum: f.Checksum}
	}
	return out, nil
}

// adoptable returns the name of the file f names when the access may adopt it: on the
// medium of the checkpoint directory, a regular file of f.Size bytes.
func (a *access) adoptable(f sdk.StreamStateHandle) (string, error) {
	name, err := a.s.name(f.Ref)
	if err != nil {
		return "", a.s.errs.WrapAs(sdk.ErrUnsupported, err, "adopt %q", f.Ref)
	}
	if (a.s.uri(name) == "") != (a.s.uri(a.s.cfg.Dir) == "") {
		return "", a.s.errs.New(sdk.ErrUnsupported, "adopt %q: not on the medium of the checkpoint directory '%s'", f.Ref, a.s.pointer(a.s.cfg.Dir))
	}
	info, err := a.s.fs.Stat(name)
	if err != nil {
		return "", a.s.errs.WrapAs(sdk.ErrUnsupported, err, "adopt %q", f.Ref)
	}
	if !info.IsRegular || info.Size != f.Size {
		return "", a.s.errs.New(sdk.ErrUnsupported, "adopt %q: '%s' is no file of %d bytes (%d bytes, regular %v)", f.Ref, name, f.Size, info.Size, info.IsRegular)
	}
	return name, nil
}

// markerName returns the name of the marker of the adopted file ref.
func (a *access) markerName(ref string) string {
	sum := sha256.Sum256([]byte(ref))
	return filepath.Join(a.jobDir, layout.SharedDir, adoptedPrefix+hex.EncodeToString(sum[:16]))
}

// writeMarker records the adoption of ref: a marker written to a temporary file and
// renamed into place without replacing, so that it appears whole. A marker already there
// for ref is the record of an earlier adoption.
func (a *access) writeMarker(ref string) error {
	marker := a.markerName(ref)
	if got, err := a.readMarker(marker); err == nil && got == ref {
		return nil
	}
	suffix, err := layout.RandomHex(8)
	if err != nil {
		return a.s.errs.Wrap(err, "adopt %q", ref)
	}
	tmp := filepath.Join(filepath.Dir(marker), adoptingPrefix+suffix)
	err = a.writeFile(tmp, []byte(ref))
	if errors.Is(err, fs.ErrNotExist) {
		if err = a.s.fs.MkdirAll(filepath.Dir(marker)); err == nil {
			err = a.writeFile(tmp, []byte(ref))
		}
	}
	if err != nil {
		return a.s.errs.Wrap(err, "adopt %q: write marker '%s'", ref, tmp)
	}
	err = a.s.fs.RenameNoReplace(tmp, marker)
	if err == nil {
		return nil
	}
	a.s.fs.Remove(tmp)
	if errors.Is(err, fs.ErrExist) {
		if got, rerr := a.readMarker(marker); rerr == nil && got == ref {
			return nil // adopted meanwhile
		}
	}
	return a.s.errs.Wrap(err, "adopt %q: publish marker '%s'", ref, marker)
}

// writeFile creates name with data, synced.
func (a *access) writeFile(name string, data []byte) error {
	f, err := a.s.fs.Create(name)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		a.s.fs.Remove(name)
	}
	return err
}

// readMarker returns the ref the marker name records.
func (a *access) readMarker(name string) (string, error) {
	rc, err := a.s.fs.Open(name)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<10))
	if err != nil {
		return "", err
	}
	return string(bytes.TrimSpace(b)), nil
}

// discardAdopted deletes the adopted file ref and its marker; done is false, with no
// error, when ref has no marker (it is no adopted file).
func (a *access) discardAdopted(ref string) (done bool, err error) {
	marker := a.markerName(ref)
	got, err := a.readMarker(marker)
	if errors.Is(err, fs.ErrNotExist) || err == nil && got != ref {
		return false, nil
	}
	if err != nil {
		return false, a.s.errs.Wrap(err, "discard state %q: read marker '%s'", ref, marker)
	}
	name, err := a.s.name(ref)
	if err != nil {
		return false, a.s.errs.Wrap(err, "discard state %q", ref)
	}
	if err := a.s.fs.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, a.s.errs.Wrap(err, "discard adopted file %q", ref)
	}
	if err := a.s.fs.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, a.s.errs.Wrap(err, "discard state %q: remove marker '%s'", ref, marker)
	}
	return true, nil
}

// ownShared reports whether name is a file this access's streams wrote in the job's shared
// directory (no marker, no adopted file).
func (a *access) ownShared(name string) bool {
	dir, base := filepath.Split(name)
	return filepath.Clean(dir) == filepath.Join(a.jobDir, layout.SharedDir) && !strings.HasPrefix(base, adoptedPrefix)
}

// listedMarker returns the handle ListSharedState lists for the marker name: the adopted
// file's ref and size (0 when the file is gone).
func (a *access) listedMarker(name string) (sdk.StreamStateHandle, error) {
	ref, err := a.readMarker(name)
	if err != nil {
		return sdk.StreamStateHandle{}, err
	}
	h := sdk.StreamStateHandle{Ref: ref, Scope: sdk.ScopeShared}
	if n, err := a.s.name(ref); err == nil {
		if info, err := a.s.fs.Stat(n); err == nil {
			h.Size = info.Size
		}
	}
	return h, nil
}
