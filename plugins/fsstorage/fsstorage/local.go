package fsstorage

import (
	"context"

	"github.com/flowstate/flowstate/plugins/fsstorage/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
)

var _ sdk.LocalStateLocator = (*access)(nil)

// LocalStatePath implements sdk.LocalStateLocator: the local file a file:// handle names,
// so that a keyed backend in another plugin process can restore from it directly. Inline
// handles and handles on S3 have none.
func (a *access) LocalStatePath(_ context.Context, h sdk.StreamStateHandle) (string, error) {
	if h.Ref == "" {
		return "", nil
	}
	if m, ok := a.fs.(fsys.Mux); !ok {
		return "", nil // a file system of the tests' own: reads must go through it
	} else if _, ok := m.Local.(fsys.Local); !ok {
		return "", nil
	}
	p, err := localPath(h.Ref)
	if err != nil {
		return "", wrapf(err, "state handle %q", h.Ref)
	}
	if fsys.MuxURI(p) != "" {
		return "", nil // an S3 object
	}
	return p, nil
}
