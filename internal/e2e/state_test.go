package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
)

// stateCmd runs `runner checkpoints SUB POINTER --config CFG ARGS...` and returns its
// standard output.
func stateCmd(t *testing.T, sub, pointer, cfg string, args ...string) (string, error) {
	t.Helper()
	return runnerCmd(t, append([]string{"checkpoints", sub, pointer, "--config", cfg, "--plugin-dir", testbin.PluginDir(t)}, args...)...)
}

// TestInspectVerifyDumpFinishedWordCount runs a word count to its end on fsstorage and
// reads its last checkpoint with the runner: `inspect --json` counts one entry of state
// "count" per distinct word of the input, `verify` finds every stream intact, and `dump`
// prints each word's count.
func TestInspectVerifyDumpFinishedWordCount(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 512<<10, 20000, map[string]any{"execution.checkpointing.data-inline-threshold": 0})
	r := s.run(t)
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 20))
	}
	s.check(t, r.out.String())
	last := regexp.MustCompile(`last checkpoint: \d+ at (\S+)`).FindStringSubmatch(r.out.String())
	if last == nil {
		t.Fatalf("no last checkpoint in:\n%s", tail(r.out.String(), 10))
	}

	checkInspected(t, inspectJSON(t, last[1], s.config), 128, len(s.expected))

	out, err := stateCmd(t, "verify", last[1], s.config)
	if err != nil || !strings.Contains(out, "all 2 state streams intact") {
		t.Fatalf("verify: %v\n%s", err, out)
	}

	out, err = stateCmd(t, "dump", last[1], s.config, "--operator", "count")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l struct {
			Key   string `json:"key"`
			State string `json:"state"`
			Value int64  `json:"value"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.State != "count" {
			t.Fatalf("dump line %q: %v", sc.Text(), err)
		}
		got[l.Key] = l.Value
	}
	if len(got) != len(s.expected) {
		t.Fatalf("dump printed %d words, the input has %d", len(got), len(s.expected))
	}
	for w, n := range s.expected {
		if got[w] != n {
			t.Fatalf("dump: %q counted %d, the input has it %d times", w, got[w], n)
		}
	}
}

// inspected is what the e2e tests read of `checkpoints inspect --json`.
type inspected struct {
	Job            string `json:"job"`
	MaxParallelism int    `json:"max_parallelism"`
	Operators      []struct {
		ID          string `json:"id"`
		Parallelism int    `json:"parallelism"`
		Entries     int64  `json:"entries"`
		States      []struct {
			Name    string `json:"name"`
			Type    string `json:"type"`
			Entries int64  `json:"entries"`
		} `json:"states"`
	} `json:"operators"`
}

// inspectJSON runs `checkpoints inspect POINTER --json` and decodes its output.
func inspectJSON(t *testing.T, pointer, cfg string) *inspected {
	t.Helper()
	out, err := stateCmd(t, "inspect", pointer, cfg, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep inspected
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("inspect --json is not JSON: %v\n%s", err, out)
	}
	return &rep
}

// checkInspected checks the report of a word count (job wc, parallelism 2) checkpoint with
// maxP key groups and words distinct words.
func checkInspected(t *testing.T, rep *inspected, maxP, words int) {
	t.Helper()
	ids := map[string]bool{}
	for _, op := range rep.Operators {
		ids[op.ID] = true
		if op.ID != "count" {
			continue
		}
		if op.Parallelism != 2 || op.Entries != int64(words) || len(op.States) != 1 ||
			op.States[0].Name != "count" || op.States[0].Type != "value[state.int64Codec]" || op.States[0].Entries != int64(words) {
			t.Fatalf("operator count: %+v; want parallelism 2 and state count with %d entries, one per distinct word", op, words)
		}
	}
	if rep.Job != "wc" || rep.MaxParallelism != maxP || !ids["source"] || !ids["count"] || !ids["sink"] {
		t.Fatalf("inspect --json: %+v; want job wc with %d key groups and operators source, count, sink", rep, maxP)
	}
}

// TestRescaleKeysThenRestore kills a word count after a few checkpoints, rewrites the one
// before its newest for 256 key groups with `rescale-keys` (so output committed after it
// must be moved aside on restore), and resumes the job with
// job.max-parallelism 256: from the old checkpoint the runner refuses, naming max
// parallelism; from the new savepoint the job finishes with exact output. Then
// `savepoint --dispose` deletes the savepoint, refuses a bogus pointer, and refuses the
// job's newest checkpoint without --force.
func TestRescaleKeysThenRestore(t *testing.T) {
	s, dirs := checkpointsAfterKill(t)
	chk := dirs[len(dirs)-2]
	target := filepath.Join(s.dir, "rescaled")
	out, err := stateCmd(t, "rescale-keys", chk, s.config, "--max-parallelism", "256", "--target", target)
	if err != nil {
		t.Fatal(err)
	}
	sp := lastLine(out)
	if !strings.HasPrefix(sp, target+"/savepoint-") {
		t.Fatalf("rescale-keys printed %q last, want a savepoint under %s:\n%s", sp, target, out)
	}
	cfg256 := filepath.Join(s.dir, "config-256.yaml")
	writeConfig(t, cfg256, extended(t, s.conf, map[string]any{"job.max-parallelism": 256}))
	run256 := func(from string) *runner {
		return startRunner(t, "run", "--config", cfg256, "--plugin-dir", testbin.PluginDir(t), "--from", from)
	}

	r := run256(chk)
	if err := r.wait(t, time.Minute); err == nil || !strings.Contains(r.out.String(), "max parallelism 128, the job 256") {
		t.Fatalf("--from the checkpoint of 128 key groups into a job of 256: %v; want a refusal naming max parallelism:\n%s", err, tail(r.out.String(), 20))
	}
	r = run256(sp)
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("--from the rescaled savepoint: %v\n%s", err, tail(r.out.String(), 30))
	}
	s.check(t, r.out.String())

	out, err = runnerCmd(t, "savepoint", "--config", s.config, "--plugin-dir", testbin.PluginDir(t), "--dispose", sp, "--force-outside") // no savepoint-dir is configured
	if err != nil || !strings.Contains(out, "disposed of savepoint") {
		t.Fatalf("savepoint --dispose %s: %v\n%s", sp, err, out)
	}
	if _, err := os.Stat(sp); !os.IsNotExist(err) {
		t.Fatalf("savepoint %s still there after --dispose: %v", sp, err)
	}
	bogus := filepath.Join(s.dir, "no-such-savepoint")
	if _, err := runnerCmd(t, "savepoint", "--config", s.config, "--plugin-dir", testbin.PluginDir(t), "--dispose", bogus); err == nil || !strings.Contains(err.Error(), bogus) {
		t.Fatalf("savepoint --dispose of a bogus pointer: %v; want an error naming it", err)
	}
	metas, _ := filepath.Glob(filepath.Join(s.dir, "checkpoints", "wc", "chk-*", "_metadata"))
	newest := ""
	for _, m := range metas {
		if d := filepath.Dir(m); newest == "" || chkID(d) > chkID(newest) {
			newest = d
		}
	}
	if _, err := runnerCmd(t, "savepoint", "--config", s.config, "--plugin-dir", testbin.PluginDir(t), "--dispose", newest); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("savepoint --dispose of the newest checkpoint %s: %v; want a refusal pointing at --force", newest, err)
	}
	if _, err := os.Stat(filepath.Join(newest, "_metadata")); err != nil {
		t.Fatalf("the refused disposal removed %s: %v", newest, err)
	}
}

// TestStateCommandsOnS3 runs a word count with checkpoints in S3 and works on its last
// checkpoint through fsstorage's S3 support: inspect, verify, rescale-keys into an s3://
// target (refused inside the job's checkpoint directory), inspect of the savepoint, and
// savepoint --dispose of it (refused outside the checkpoint directory without
// --force-outside).
func TestStateCommandsOnS3(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 256<<10, 20000, nil)
	bucket := s.onS3(t)
	r := s.run(t)
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 20))
	}
	s.check(t, r.out.String())
	checkInspected(t, inspectJSON(t, "latest", s.config), 128, len(s.expected))
	if out, err := stateCmd(t, "verify", "latest", s.config); err != nil || !strings.Contains(out, "state streams intact") {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	inside := "s3://" + bucket + "/flowstate/wc/shared/rescaled"
	if _, err := stateCmd(t, "rescale-keys", "latest", s.config, "--max-parallelism", "256", "--target", inside); err == nil || !strings.Contains(err.Error(), "checkpoint directory of job") {
		t.Fatalf("rescale-keys --target %s: %v; want a refusal naming the job's checkpoint directory", inside, err)
	}
	target := "s3://" + bucket + "/savepoints"
	out, err := stateCmd(t, "rescale-keys", "latest", s.config, "--max-parallelism", "256", "--target", target)
	if err != nil {
		t.Fatal(err)
	}
	sp := lastLine(out)
	if !strings.HasPrefix(sp, target+"/savepoint-") {
		t.Fatalf("rescale-keys printed %q last, want a savepoint under %s", sp, target)
	}
	checkInspected(t, inspectJSON(t, sp, s.config), 256, len(s.expected))
	if _, err := runnerCmd(t, "savepoint", "--config", s.config, "--plugin-dir", testbin.PluginDir(t), "--dispose", sp); err == nil || !strings.Contains(err.Error(), "--force-outside") {
		t.Fatalf("savepoint --dispose %s, outside the checkpoint directory: %v; want a refusal pointing to --force-outside", sp, err)
	}
	if out, err := runnerCmd(t, "savepoint", "--config", s.config, "--plugin-dir", testbin.PluginDir(t), "--dispose", sp, "--force-outside"); err != nil {
		t.Fatalf("savepoint --dispose %s: %v\n%s", sp, err, out)
	}
	if _, err := stateCmd(t, "inspect", sp, s.config); err == nil {
		t.Fatalf("the disposed savepoint %s still resolves", sp)
	}
}
