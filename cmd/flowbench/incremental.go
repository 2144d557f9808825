package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/sdk"
)

// incrResult compares the bytes a checkpoint uploads after 1% of the keys changed:
// leveldb with incremental checkpoints against leveldb with full ones.
type incrResult struct {
	pending string // why there is no figure (the backend refused incremental=true)
	keys    int64
	changed int64
	first   int64 // the incremental backend's first checkpoint (everything)
	incr    int64 // its second checkpoint, after the change
	full    int64 // the full backend's second checkpoint
}

// incremental measures item 5's incremental checkpoint.
func (b *bench) incremental(ctx context.Context) (*incrResult, error) {
	res := &incrResult{keys: b.s.IncrKeys, changed: b.s.IncrKeys / 100}
	for _, inc := range []bool{true, false} {
		first, second, err := b.changeOnePercent(ctx, inc)
		var oe *sdk.OptionError
		if inc && errors.As(err, &oe) {
			res.pending = err.Error()
			b.logf("incremental: pending: %v", err)
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		if inc {
			res.first, res.incr = first, second
		} else {
			res.full = second
		}
		b.logf("incremental=%t: first checkpoint uploaded %s, second (1%% changed) %s", inc, bytesHuman(first), bytesHuman(second))
	}
	return res, nil
}

// changeOnePercent fills a leveldb keyed backend (plugin) with IncrKeys entries of 100
// bytes, checkpoints, changes every 100th entry and checkpoints again; it returns the
// bytes each checkpoint uploaded.
func (b *bench) changeOnePercent(ctx context.Context, incremental bool) (first, second int64, err error) {
	dir, err := freshDir(b.s.Work, "incremental")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	h, err := openHarness(ctx, b.s.PluginDir, plugin, builtins.LevelDB, sdk.Options{sdk.OptionIncremental: strconv.FormatBool(incremental)}, dir)
	if err != nil {
		return 0, 0, err
	}
	defer h.Close()
	kb, err := h.keyed(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer kb.Close()
	const size = 100
	if err := fill(ctx, kb, 0, b.s.IncrKeys, 1, size, 1); err != nil {
		return 0, 0, fmt.Errorf("fill leveldb: %w", err)
	}
	r1, err := h.checkpoint(ctx, kb)
	if err != nil {
		return 0, 0, fmt.Errorf("leveldb (incremental=%t): first checkpoint: %w", incremental, err)
	}
	if err := fill(ctx, kb, 0, b.s.IncrKeys, 100, size, 2); err != nil {
		return 0, 0, fmt.Errorf("change leveldb: %w", err)
	}
	r2, err := h.checkpoint(ctx, kb)
	if err != nil {
		return 0, 0, fmt.Errorf("leveldb (incremental=%t): second checkpoint: %w", incremental, err)
	}
	return r1.uploaded, r2.uploaded, nil
}
