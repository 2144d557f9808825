package config

import (
	"errors"
	"strings"
	"testing"
)

func TestErrors(t *testing.T) {
	cases := []struct {
		name, in string
		is       error
		wants    []string
	}{
		{"unknown key, did you mean", "job.name: x\nexecution.checkpointing.intervall: 10s\n", ErrUnknownKey,
			[]string{"config.yaml:2: execution.checkpointing.intervall: unknown key: did you mean execution.checkpointing.interval?"}},
		{"unknown deprecated-looking key suggests the current one", "state.checkpoints.dirs: /x\n", ErrUnknownKey,
			[]string{"config.yaml:1: state.checkpoints.dirs: unknown key: did you mean execution.checkpointing.dir?"}},
		{"key without its prefix", "checkpointing:\n  num-retained: 3\n", ErrUnknownKey,
			[]string{"config.yaml:2: checkpointing.num-retained: unknown key: did you mean execution.checkpointing.num-retained?"}},
		{"unknown key, nothing close", "zzz: 1\n", ErrUnknownKey, []string{"config.yaml:1: zzz: unknown key"}},
		{"reserved name as a plugin", "state.backend.type.x: 1\n", ErrUnknownKey, []string{"config.yaml:1: state.backend.type.x: unknown key"}},
		{"duplicate key across shapes", "job.name: a\njob:\n  name: b\n", ErrDuplicate,
			[]string{"config.yaml:3: job.name: duplicate key: also set at line 1"}},
		{"conflicting old and new", "state.checkpoints.dir: /a\nexecution.checkpointing.dir: /b\n", ErrConflict,
			[]string{"config.yaml:2: execution.checkpointing.dir: conflicting keys: state.checkpoints.dir: /a (line 1) and execution.checkpointing.dir: /b (line 2) disagree"}},
		{"conflicting backends", "state.backend: rocksdb\nstate.backend.type: hashmap\n", ErrConflict,
			[]string{"state.backend: rocksdb (line 1) and state.backend.type: hashmap (line 2)"}},
		{"conflicting rocksdb option", "state.backend.rocksdb.localdir: /a\nstate.backend.leveldb.localdir: /b\n", ErrConflict,
			[]string{"state.backend.rocksdb.localdir: /a (line 1)"}},
		{"bad duration", "execution.checkpointing.interval: soon\n", ErrBadValue,
			[]string{`config.yaml:1: execution.checkpointing.interval: bad value "soon"`}},
		{"zero timeout", "execution.checkpointing.timeout: 0\n", ErrBadValue, []string{"config.yaml:1: execution.checkpointing.timeout", "must be positive"}},
		{"short lease timeout", "job.lease.timeout: 500ms\n", ErrBadValue, []string{"config.yaml:1: job.lease.timeout", "at least 1s"}},
		{"bad int", "execution.checkpointing.num-retained: many\n", ErrBadValue, []string{`num-retained: bad value "many": want a whole number`}},
		{"int out of range", "execution.checkpointing.num-retained: 0\n", ErrBadValue, []string{"want a number from 1 to"}},
		{"bad bool", "execution.checkpointing.incremental: yes\n", ErrBadValue, []string{`incremental: bad value "yes": want true or false`}},
		{"bad size", "execution.checkpointing.data-inline-threshold: lots\n", ErrBadValue, []string{`data-inline-threshold: bad value "lots"`}},
		{"size over 1 MiB", "execution.checkpointing.data-inline-threshold: 2mb\n", ErrBadValue, []string{"want a size from 0 to 1048576 bytes"}},
		{"bad float", "job.rate: fast\n", ErrBadValue, []string{`job.rate: bad value "fast"`}},
		{"negative memory limit", "runner.memory.limit: -1mb\n", ErrBadValue, []string{`config.yaml:1: runner.memory.limit: bad value "-1mb"`}},
		{"bad gogc", "runner.memory.gogc: fast\n", ErrBadValue, []string{`config.yaml:1: runner.memory.gogc: bad value "fast": want off or a percent from 1 to 100000`}},
		{"gogc 0", "runner.memory.gogc: 0\n", ErrBadValue, []string{`runner.memory.gogc: bad value "0"`}},
		{"removed gc-headroom", "runner.memory.gc-headroom: 64mb\n", ErrUnknownKey, []string{`config.yaml:1: runner.memory.gc-headroom: unknown key: removed with the heap ballast`, "runner.memory.limit", "runner.memory.gogc"}},
		{"bad plugin name", "state.backend.type: Hash Map\n", ErrBadValue, []string{"config.yaml:1: state.backend.type: bad value \"Hash Map\""}},
		{"bad restart type", "restart-strategy.type: exponential-backoff\n", ErrBadValue, []string{"want exponential-delay, fixed-delay, failure-rate or none"}},
		{"port out of range", "rest.port: 70000\n", ErrBadValue, []string{"rest.port: bad value"}},
		{"parallelism over max", "job.parallelism: 8\njob.max-parallelism: 4\n", ErrBadValue,
			[]string{"config.yaml:2: job.max-parallelism: bad value: job.parallelism (8) exceeds job.max-parallelism (4)"}},
		{"list value", "job.name:\n  - a\n", ErrBadValue, []string{"config.yaml:1: job.name: bad value", "a list is not allowed"}},
		{"no value", "execution.checkpointing.dir:\n", ErrBadValue, []string{"config.yaml:1: execution.checkpointing.dir: bad value", "no value (give one or remove the key)"}},
		{"empty string", "job.name: ''\n", ErrBadValue, []string{"config.yaml:1: job.name: bad value"}},
		{"job name with a slash", "job.name: a/b\n", ErrBadValue, []string{`config.yaml:1: job.name: bad value "a/b"`, "only ASCII letters, digits", `not '/'`}},
		{"job name ..", "job.name: ..\n", ErrBadValue, []string{`config.yaml:1: job.name: bad value ".."`, "must not start with '.'"}},
		{"job name with ..", "job.name: a..b\n", ErrBadValue, []string{`job.name: bad value "a..b"`, `must not contain ".."`}},
		{"job name too long", "job.name: " + strings.Repeat("x", 201) + "\n", ErrBadValue, []string{"config.yaml:1: job.name: bad value", "201 characters long, at most 200"}},
		{"Flink's pipeline.name with a space", "pipeline.name: My Job\n", ErrBadValue, []string{"config.yaml:1: pipeline.name: bad value", "not ' '"}},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.in), testFile)
		if err == nil {
			t.Errorf("%s: want an error", tc.name)
			continue
		}
		if !errors.Is(err, tc.is) {
			t.Errorf("%s: error %v is not %v", tc.name, err, tc.is)
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.Line == 0 || ce.Key == "" {
			t.Errorf("%s: want an *Error with key and line, got %#v", tc.name, err)
		}
		wantContains(t, err.Error(), tc.wants...)
	}
}

func TestFileErrors(t *testing.T) {
	wantContains(t, parseErr(t, "- a\n- b\n"), "config.yaml:1: the file must be a map")
	wantContains(t, parseErr(t, "job: [unclosed\n"), "/etc/flowstate/config.yaml: yaml:")
	// All problems at once, in line order.
	msg := parseErr(t, "job.parallelism: x\nbogus: 1\nexecution.checkpointing.interval: never\n")
	wantContains(t, msg, "config.yaml:1: job.parallelism", "\n/etc/flowstate/config.yaml:2: bogus", "\n/etc/flowstate/config.yaml:3: execution.checkpointing.interval")
	if _, err := Load("/nonexistent/flowstate.yaml"); err == nil {
		t.Error("Load of a missing file: want an error")
	} else {
		wantContains(t, err.Error(), "read config", "/nonexistent/flowstate.yaml")
	}
}

// TestJobNameRule accepts the names the documented rule allows, up to its length.
func TestJobNameRule(t *testing.T) {
	for _, name := range []string{"wc", "a", "Orders_2026-12.v2", strings.Repeat("x", MaxJobNameLength), "a.b"} {
		if err := CheckJobName(name); err != nil {
			t.Errorf("CheckJobName(%q) = %v, want nil", name, err)
		}
		if _, err := Parse([]byte("job.name: "+name+"\n"), testFile); err != nil {
			t.Errorf("job.name: %s refused: %v", name, err)
		}
	}
	for _, name := range []string{"", ".", "..", ".hidden", "a..b", "a/b", `a\b`, "a b", "caf\u00e9", "a\x00b", strings.Repeat("x", MaxJobNameLength+1)} {
		if err := CheckJobName(name); err == nil {
			t.Errorf("CheckJobName(%q) = nil, want an error", name)
		}
	}
}
