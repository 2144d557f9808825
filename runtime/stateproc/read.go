package stateproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// LevelDBIncremental is the leveldb plugin's format of incremental checkpoints, which this
// package decodes from its description (the runtime imports no plugin; a test checks the
// description against the plugin). A handle of this format has Files, in order:
//
//	"base"     a canonical stream (sdk/kvstream) with every pair of the state when the base
//	           was written
//	"delta-1"  a canonical stream of the keys written since the checkpoint of the base, in
//	...        ascending order, each value starting with an operation byte: 'P' and the
//	"delta-N"  key's new value (a put), or 'D' alone (the key was deleted)
//
// The state the handle restores is the base with each delta applied in order.
const LevelDBIncremental = "leveldb-incremental-v1"

// Operation bytes that start the values of a LevelDBIncremental delta.
const (
	deltaPut    = 'P'
	deltaDelete = 'D'
)

// ErrNotDecoded says a keyed state handle is in a format this package cannot decode.
var ErrNotDecoded = errors.New("format not decoded")

// Decodes reports whether this package decodes keyed state handles of format.
func Decodes(format string) bool {
	return format == sdk.FormatCanonical || format == LevelDBIncremental
}

// readHandle calls fn for every pair h restores, state key and value, verifying every
// stream it reads against its handle. The slices are fn's only until it returns. A format
// this package does not decode gives an error wrapping ErrNotDecoded.
func readHandle(ctx context.Context, r checkpoint.Reader, h sdk.KeyedStateHandle, fn func(k, v []byte) error) error {
	switch h.Format {
	case sdk.FormatCanonical:
		for _, f := range h.Files {
			if err := readStream(ctx, r, f, fn); err != nil {
				return err
			}
		}
		return nil
	case LevelDBIncremental:
		return readIncremental(ctx, r, h, fn)
	default:
		return fmt.Errorf("keyed state handle of key groups %s in format %q: %w (this runner decodes %q and %q)",
			h.KeyGroups, h.Format, ErrNotDecoded, sdk.FormatCanonical, LevelDBIncremental)
	}
}

// readIncremental applies the base and deltas of a LevelDBIncremental handle in memory,
// then calls fn for every live pair in key order.
func readIncremental(ctx context.Context, r checkpoint.Reader, h sdk.KeyedStateHandle, fn func(k, v []byte) error) error {
	if len(h.Files) == 0 || h.Files[0].Name != "base" {
		return fmt.Errorf("%s handle of key groups %s: first file is not \"base\": %w", LevelDBIncremental, h.KeyGroups, sdk.ErrCorrupt)
	}
	live := map[string][]byte{}
	if err := readStream(ctx, r, h.Files[0], func(k, v []byte) error {
		live[string(k)] = append([]byte(nil), v...)
		return nil
	}); err != nil {
		return err
	}
	for i, f := range h.Files[1:] {
		if want := "delta-" + strconv.Itoa(i+1); f.Name != want {
			return fmt.Errorf("%s handle of key groups %s: file %d is %q, want %q: %w", LevelDBIncremental, h.KeyGroups, i+1, f.Name, want, sdk.ErrCorrupt)
		}
		err := readStream(ctx, r, f, func(k, v []byte) error {
			switch {
			case len(v) > 0 && v[0] == deltaPut:
				live[string(k)] = append([]byte(nil), v[1:]...)
			case len(v) == 1 && v[0] == deltaDelete:
				delete(live, string(k))
			default:
				return fmt.Errorf("key %x: value does not start with a put or delete operation: %w", k, sdk.ErrCorrupt)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(live))
	for k := range live {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := fn([]byte(k), live[k]); err != nil {
			return err
		}
	}
	return nil
}

// readStream calls fn for every pair of the canonical stream f, verified against its
// handle. Errors name the stream.
func readStream(ctx context.Context, r checkpoint.Reader, f sdk.NamedStateHandle, fn func(k, v []byte) error) error {
	rc, err := r.Open(ctx, f.Handle)
	if err != nil {
		return fmt.Errorf("stream %q: %w", f.Name, err)
	}
	defer rc.Close()
	kr := kvstream.NewReader(rc)
	for {
		k, v, err := kr.NextView()
		if err == io.EOF {
			return nil
		}
		if err == nil {
			err = fn(k, v)
		}
		if err != nil {
			return fmt.Errorf("stream %q (%s): %w", f.Name, refOf(f.Handle), err)
		}
	}
}

// refOf names a stream: its ref, or "inline" for bytes kept in the metadata.
func refOf(h sdk.StreamStateHandle) string {
	if h.Ref == "" {
		return "inline"
	}
	return h.Ref
}
