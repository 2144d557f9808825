package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/wordcheck"
)

// checkQuickDistributed checks the distributed phase of a quick run (settings s), whose
// runs checked their own output: every variant measured once, with the CPU of every kind
// of process, one runner's CPU per runner process, and, in distributed mode, frames on the
// repartition stream whose payload holds at least every word's letters once.
func checkQuickDistributed(t *testing.T, s settings, x *distResult) {
	t.Helper()
	if x == nil || x.rounds != 1 || x.words == 0 || x.parallelism != s.DistParallelism {
		t.Fatalf("distributed: %+v", x)
	}
	input := filepath.Join(t.TempDir(), "input.txt")
	if err := writeText(input, s.DistBytes); err != nil {
		t.Fatal(err)
	}
	counts, err := wordcheck.Expected(input)
	if err != nil {
		t.Fatal(err)
	}
	var letters, words int64
	for w, c := range counts {
		letters += int64(len(w)) * c
		words += c
	}
	if words != x.words {
		t.Errorf("distributed: the phase counted %d words, the input holds %d", x.words, words)
	}
	for _, v := range distVariants {
		d := x.runs[v.key]
		if len(d.words) != 1 || !(d.words[0] > 0) || !(d.output[0] >= d.words[0]) || !(d.wall[0] > 0) {
			t.Errorf("distributed %s: words/s %v, to the complete output %v, in all %v s", v.key, d.words, d.output, d.wall)
		}
		if !(d.cpu[kindRunner][0] > 0) || !(d.cpu[kindServer][0] > 0) || d.cpu[kindBackend][0] < 0 || d.cpu[kindStorage][0] < 0 {
			t.Errorf("distributed %s: CPU us/word %v", v.key, d.cpu)
		}
		if n := len(d.perRunner[0]); n != max(1, v.runners) {
			t.Errorf("distributed %s: CPU of %d runner processes, want %d", v.key, n, max(1, v.runners))
		}
		if v.runners == 0 {
			if d.repBytes[0] != 0 {
				t.Errorf("the single runner has repartition bytes: %v", d.repBytes)
			}
			continue
		}
		if payload := d.payload[0] * float64(words); payload < float64(letters) || !(d.frames[0] > 0) || d.repBytes[0] < d.payload[0] {
			t.Errorf("distributed %s: frames' payload %.0f bytes for the input's %d letters of words; %v frames/word, %v bytes/word in all",
				v.key, payload, letters, d.frames, d.repBytes)
		}
	}
	if r := x.raw; len(r.publish) != 1 || !(r.publish[0] > 0) || !(r.consume[0] > 0) || !(r.serverCPU[0] > 0) {
		t.Errorf("distributed: raw frames %+v", r)
	}
	if v := x.ratio("d1"); !(v > 0) {
		t.Errorf("distributed: ratio of 1 runner to the single runner %v", v)
	}
}

// TestDistributedPhaseNeedsTheServer: without a nats-server binary the phase fails, naming
// the variable that gives it, instead of measuring nothing.
func TestDistributedPhaseNeedsTheServer(t *testing.T) {
	b := &bench{s: quickSettings(), start: time.Now(), log: io.Discard}
	b.s.Work, b.s.Runner, b.s.PluginDir = t.TempDir(), "bin/runner", "bin/plugins"
	if _, err := b.distributed(context.Background(), time.Now().Add(time.Minute)); err == nil || !strings.Contains(err.Error(), natsServerEnv) {
		t.Fatalf("distributed phase without a server: %v; want an error naming %s", err, natsServerEnv)
	}
}

// TestDistSharesAreEven: the input's partition subjects give every source subtask the
// same share of the lines at parallelism 1, 2 and 3, as the phase's report says.
func TestDistSharesAreEven(t *testing.T) {
	const lines = 6000
	for _, p := range []int{1, 2, 3} {
		shares := distShares(lines, p)
		for _, n := range shares {
			if n != lines/int64(p) {
				t.Errorf("parallelism %d: shares %v of %d lines", p, shares, lines)
			}
		}
	}
}

// TestDistRoundVariantsTurn: each round runs every variant once, and each variant goes
// first in one round of every len(distVariants).
func TestDistRoundVariantsTurn(t *testing.T) {
	first := map[string]bool{}
	for round := range distVariants {
		seen := map[string]bool{}
		vs := distRoundVariants(round)
		for _, v := range vs {
			seen[v.key] = true
		}
		if len(vs) != len(distVariants) || len(seen) != len(distVariants) {
			t.Fatalf("round %d runs %v", round, vs)
		}
		first[vs[0].key] = true
	}
	if len(first) != len(distVariants) {
		t.Fatalf("first variants over %d rounds: %v", len(distVariants), first)
	}
}
