package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flowstate/flowstate/runtime/builtins"
)

// ioResult holds items 3 (checkpoint MB/s against a sequential write) and 4 (restore).
type ioResult struct {
	entries  int64
	size     int64     // bytes of the checkpoint
	fill     float64   // MB/s writing the state into the plugin
	ckpt     []float64 // checkpoint MB/s through the plugins, per round
	seq      []float64 // sequential write MB/s of the same bytes, per round
	restore  map[mode][]float64
	rounds   int
	restores int
}

func (r *ioResult) ckptRatio() float64 { return pairedRatio(r.ckpt, r.seq) }
func (r *ioResult) restoreRatio() float64 {
	return pairedRatio(r.restore[plugin], r.restore[inProcess])
}

// checkpointIO fills a hashmap keyed backend in its plugin with about StateBytes of state,
// checkpoints it into fsstorage (file://) alternating with a plain sequential write of the
// same bytes to the same directory, then restores the last checkpoint through the plugins
// and in-process, alternating.
func (b *bench) checkpointIO(ctx context.Context, deadline time.Time) (*ioResult, error) {
	dir, err := freshDir(b.s.Work, "ckptio")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	res := &ioResult{restore: map[mode][]float64{}}
	res.entries = b.s.StateBytes / int64(b.s.StateValue+16) // 10-byte keys and framing
	h, err := openHarness(ctx, b.s.PluginDir, plugin, builtins.Hashmap, nil, dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if h != nil {
			h.Close()
		}
	}()
	kb, err := h.keyed(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := fill(ctx, kb, 0, res.entries, 1, b.s.StateValue, 1); err != nil {
		return nil, fmt.Errorf("fill hashmap: %w", err)
	}
	res.fill = mbps(res.entries*int64(b.s.StateValue), time.Since(start))
	b.logf("checkpoint I/O: %d entries of %d bytes written into the hashmap plugin at %.0f MB/s", res.entries, b.s.StateValue, res.fill)
	var last snapshotResult
	for round := 0; round < b.s.Rounds; round++ {
		if round > 0 && time.Now().After(deadline) {
			b.logf("checkpoint I/O: stopping after %d rounds (time budget)", round)
			break
		}
		if last, err = h.checkpoint(ctx, kb); err != nil {
			return nil, fmt.Errorf("hashmap checkpoint: %w", err)
		}
		res.size = last.uploaded
		res.ckpt = append(res.ckpt, mbps(last.uploaded, last.elapsed))
		d, err := sequentialWrite(dir, last.uploaded)
		if err != nil {
			return nil, err
		}
		res.seq = append(res.seq, mbps(last.uploaded, d))
		res.rounds = round + 1
		b.logf("checkpoint I/O round %d: checkpoint %s at %.0f MB/s, sequential write at %.0f MB/s", round+1, bytesHuman(last.uploaded), res.ckpt[round], res.seq[round])
	}
	kb.Close()
	h.Close()
	h = nil
	for round := 0; round < b.s.Rounds; round++ {
		if round > 0 && time.Now().After(deadline) {
			b.logf("restore: stopping after %d rounds (time budget)", round)
			break
		}
		for _, m := range roundModes(round) {
			r, err := restoreInChild(ctx, b.s.Work, restoreSpec{InProcess: m == inProcess, PluginDir: b.s.PluginDir, Dir: dir,
				Handles: last.handles, Entries: res.entries, ValueSize: b.s.StateValue, Size: last.size})
			if err != nil {
				return nil, err
			}
			res.restore[m] = append(res.restore[m], r)
			b.logf("restore round %d %-10s: %.0f MB/s", round+1, m, r)
		}
		res.restores = round + 1
	}
	return res, nil
}

// restoreOnce restores spec's checkpoint, checks a few entries, and returns the time
// Restore took.
func restoreOnce(ctx context.Context, spec restoreSpec) (time.Duration, error) {
	m := modeOf(spec.InProcess)
	h, err := openHarness(ctx, spec.PluginDir, m, builtins.Hashmap, nil, spec.Dir)
	if err != nil {
		return 0, err
	}
	defer h.Close()
	kb, d, err := h.restore(ctx, spec.Handles)
	if err != nil {
		return 0, fmt.Errorf("hashmap (%s): %w", m, err)
	}
	defer kb.Close()
	probe := []int64{0, spec.Entries / 2, spec.Entries - 1}
	keys := make([][]byte, len(probe))
	for i, p := range probe {
		keys[i] = stateKey(p)
	}
	vals, err := kb.Get(ctx, keys)
	if err != nil {
		return 0, fmt.Errorf("hashmap (%s): read restored state: %w", m, err)
	}
	for i, p := range probe {
		want := binary.BigEndian.AppendUint64(nil, 1^uint64(p))
		if len(vals[i]) != spec.ValueSize || !bytes.HasPrefix(vals[i], want) {
			return 0, fmt.Errorf("hashmap (%s): restored entry %d is wrong (%d bytes)", m, p, len(vals[i]))
		}
	}
	return d, nil
}

// sequentialWrite writes n bytes to a new file in dir in 1 MiB writes, fsyncs and closes
// it, as fsstorage does with a state file, and returns the time it took.
func sequentialWrite(dir string, n int64) (time.Duration, error) {
	name := filepath.Join(dir, "sequential-write.bin")
	defer os.Remove(name)
	buf := make([]byte, 1<<20)
	rand.Read(buf)
	start := time.Now()
	f, err := os.Create(name)
	if err != nil {
		return 0, fmt.Errorf("sequential write: %w", err)
	}
	for left := n; left > 0; {
		k := min(left, int64(len(buf)))
		if _, err := f.Write(buf[:k]); err != nil {
			f.Close()
			return 0, fmt.Errorf("sequential write to %s: %w", name, err)
		}
		left -= k
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, fmt.Errorf("sequential write: fsync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("sequential write: close %s: %w", name, err)
	}
	return time.Since(start), nil
}
