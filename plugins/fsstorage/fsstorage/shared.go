package fsstorage

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

var _ sdk.SharedStateLister = (*access)(nil)

// ListSharedState implements sdk.SharedStateLister: a handle for every regular file in
// <dir>/<job>/shared/, with the same Ref the file's state stream returned. A missing
// directory lists nothing.
func (a *access) ListSharedState(_ context.Context) ([]sdk.StreamStateHandle, error) {
	dir := filepath.Join(a.jobDir, layout.SharedDir)
	entries, err := a.fs.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapf(err, "list shared state directory '%s'", dir)
	}
	var out []sdk.StreamStateHandle
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		p := filepath.Join(dir, e.Name)
		info, err := a.fs.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // discarded meanwhile
		}
		if err != nil {
			return nil, wrapf(err, "list shared state: stat '%s'", p)
		}
		if !info.IsRegular {
			continue
		}
		out = append(out, sdk.StreamStateHandle{Ref: fileURI(p), Size: info.Size, Scope: sdk.ScopeShared})
	}
	return out, nil
}
