package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/runtime/control"
)

// TestSavepointTargetsStayInPlace runs a rate-limited word count whose configuration sets
// no savepoint directory. Savepoint requests sent straight to its control endpoint (as
// curl or a web page would) with a target outside, relative, with "../" or through a
// symbolic link into the job's checkpoint directory are refused with a message naming the
// target and the rule, and write nothing. Through the CLI: a savepoint without a target
// points to --target; one with --config of a file that sets a savepoint directory goes
// there; one with --target of a local directory elsewhere goes there (the CLI proves it
// may write there) and leaves no proof file; one with --target through a symbolic link
// into the job's checkpoint directory is refused by the checkpoint storage.
func TestSavepointTargetsStayInPlace(t *testing.T) {
	port := freePort(t)
	s := newWordcount(t, "hashmap", "filesystem", 1<<20, 500, map[string]any{"rest.port": port})
	jobDir := filepath.Join(s.dir, "checkpoints", "wc")
	outside := t.TempDir()
	if err := os.Symlink(jobDir, filepath.Join(outside, "to-job")); err != nil {
		t.Fatal(err)
	}
	r := s.run(t)
	if !r.owns(t) {
		t.Fatalf("the job did not start:\n%s", tail(r.out.String(), 20))
	}
	waitOutput(t, r, "checkpoint complete", time.Minute)

	addr := "127.0.0.1:" + strconv.Itoa(port)
	relative := "rel-savepoint-" + strconv.Itoa(port) // the runner's working directory is this test's
	t.Cleanup(func() { os.RemoveAll(relative) })
	for _, c := range []struct{ target, want string }{
		{filepath.Join(outside, "new"), "has no execution.checkpointing.savepoint-dir"},
		{outside, "has no execution.checkpointing.savepoint-dir"},
		{relative, "relative path"},
		{filepath.Join(s.dir, "checkpoints") + "/../escape", `".." element`},
		{filepath.Join(outside, "to-job", "sp"), "has no execution.checkpointing.savepoint-dir"},
	} {
		_, err := tokenClient(t, addr).TriggerSavepoint(context.Background(), control.SavepointRequest{Job: "wc", Target: c.target})
		if err == nil || !strings.Contains(err.Error(), "refusing savepoint target") || !strings.Contains(err.Error(), c.target) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("HTTP savepoint to %q: %v; want a refusal naming it and %q", c.target, err, c.want)
		}
	}
	for _, p := range []string{filepath.Join(outside, "new"), relative, filepath.Join(s.dir, "escape"), filepath.Join(jobDir, "sp")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("a refused savepoint request created %s (%v)", p, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("the refused requests wrote in %s: %v", outside, entries)
	}

	cli := func(cfg string, args ...string) (string, error) {
		return runnerCmd(t, append([]string{"savepoint", "--config", cfg, "--plugin-dir", testbin.PluginDir(t)}, args...)...)
	}
	if _, err := cli(s.config); err == nil || !strings.Contains(err.Error(), "--target") || !strings.Contains(err.Error(), "execution.checkpointing.savepoint-dir") {
		t.Errorf("savepoint with no savepoint directory configured: %v; want a refusal pointing to --target and execution.checkpointing.savepoint-dir", err)
	}
	spDir := filepath.Join(s.dir, "lb-savepoints")
	withDir := filepath.Join(s.dir, "lb.yaml")
	writeConfig(t, withDir, extended(t, s.conf, map[string]any{"execution.checkpointing.savepoint-dir": spDir}))
	for _, c := range []struct {
		cfg, under string
		args       []string
	}{
		{withDir, spDir, nil},
		{s.config, filepath.Join(outside, "chosen", "here"), []string{"--target", filepath.Join(outside, "chosen", "here")}},
	} {
		out, err := cli(c.cfg, c.args...)
		if err != nil {
			t.Fatalf("savepoint --config %s %v: %v\n%s", c.cfg, c.args, err, tail(r.out.String(), 20))
		}
		ptr := strings.TrimPrefix(lastLine(out), "file://")
		if filepath.Dir(ptr) != c.under {
			t.Fatalf("savepoint --config %s %v went to %s, want a savepoint in %s", c.cfg, c.args, ptr, c.under)
		}
		checkSelfContained(t, ptr)
	}
	target := filepath.Join(outside, "to-job", "sp")
	if _, err := cli(s.config, "--target", target); err == nil || !strings.Contains(err.Error(), target) || !strings.Contains(err.Error(), "checkpoint directory of job") {
		t.Errorf("savepoint --target %s: %v; want a refusal naming it and the job's checkpoint directory", target, err)
	}
	if _, err := os.Lstat(filepath.Join(jobDir, "sp")); !os.IsNotExist(err) {
		t.Errorf("the refused savepoint created %s (%v)", filepath.Join(jobDir, "sp"), err)
	}
	for _, dir := range []string{outside, filepath.Join(outside, "chosen"), filepath.Join(outside, "chosen", "here"), jobDir} {
		if proofs, _ := filepath.Glob(filepath.Join(dir, ".flowstate-savepoint-request-*")); len(proofs) > 0 {
			t.Errorf("proof files left behind: %v", proofs)
		}
	}
	if r.exited() {
		t.Fatalf("the job ended during the test:\n%s", tail(r.out.String(), 20))
	}
}

// TestDisposeStaysInPlace works on the checkpoints of a finished word count. `savepoint
// --dispose` of a savepoint outside the configured directories, named through "../.." from
// the checkpoint directory, is refused and leaves everything there; with --force-outside
// it deletes the savepoint's own files, leaves a file it did not hold and the directory,
// fails and names the file. A savepoint in the savepoint directory goes with its
// directory, and the file beside it stays. `--dispose latest` is the job's newest
// checkpoint: refused without --force, disposed of with it.
func TestDisposeStaysInPlace(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 256<<10, 20000, map[string]any{
		"execution.checkpointing.savepoint-dir": filepath.Join(t.TempDir(), "savepoints")})
	spDir := s.conf["execution.checkpointing.savepoint-dir"].(string)
	r := s.run(t)
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 20))
	}
	dispose := func(pointer string, args ...string) (string, error) {
		return runnerCmd(t, append([]string{"savepoint", "--config", s.config, "--plugin-dir", testbin.PluginDir(t), "--dispose", pointer}, args...)...)
	}
	rescaled := func(target string) string {
		t.Helper()
		args := []string{"--max-parallelism", "64"}
		if target != "" {
			args = append(args, "--target", target)
		}
		out, err := stateCmd(t, "rescale-keys", "latest", s.config, args...)
		if err != nil {
			t.Fatal(err)
		}
		return lastLine(out)
	}

	victim := filepath.Join(t.TempDir(), "victim")
	sp := rescaled(victim)
	for path, text := range map[string]string{filepath.Join(victim, "other.txt"): "beside", filepath.Join(sp, "mine.txt"): "inside"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := entries(t, sp)
	ckpt := filepath.Join(s.dir, "checkpoints")
	climb := ckpt + strings.Repeat("/..", strings.Count(ckpt, "/")) + sp
	if _, err := dispose(climb); err == nil || !strings.Contains(err.Error(), sp) || !strings.Contains(err.Error(), "--force-outside") {
		t.Fatalf("--dispose %s: %v; want a refusal naming %s and --force-outside", climb, err, sp)
	}
	if after := entries(t, sp); after != before || !strings.Contains(after, "_metadata") {
		t.Fatalf("the refused disposal changed %s from %s to %s", sp, before, after)
	}
	if _, err := dispose(climb, "--force-outside"); err == nil || !strings.Contains(err.Error(), `"mine.txt"`) || !strings.Contains(err.Error(), "stays") {
		t.Fatalf("--dispose %s --force-outside of a savepoint holding mine.txt: %v; want a failure naming it", climb, err)
	}
	if got := entries(t, sp); got != "mine.txt" {
		t.Fatalf("after the disposal %s holds %s, want mine.txt only", sp, got)
	}
	if got := entries(t, victim); got != "other.txt "+filepath.Base(sp) {
		t.Fatalf("after the disposal %s holds %s, want other.txt and %s", victim, got, filepath.Base(sp))
	}

	sp = rescaled("")
	if filepath.Dir(sp) != spDir {
		t.Fatalf("rescale-keys without --target wrote %s, not into the savepoint directory %s", sp, spDir)
	}
	if err := os.WriteFile(filepath.Join(spDir, "neighbour.txt"), []byte("beside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := dispose(sp); err != nil || !strings.Contains(out, "disposed of savepoint") {
		t.Fatalf("--dispose %s: %v\n%s", sp, err, out)
	}
	if got := entries(t, spDir); got != "neighbour.txt" {
		t.Fatalf("after the disposal of %s the savepoint directory holds %s, want neighbour.txt only", sp, got)
	}

	metas, _ := filepath.Glob(filepath.Join(ckpt, "wc", "chk-*", "_metadata"))
	newest := ""
	for _, m := range metas {
		if d := filepath.Dir(m); newest == "" || chkID(d) > chkID(newest) {
			newest = d
		}
	}
	if _, err := dispose("latest"); err == nil || !strings.Contains(err.Error(), "newest") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("--dispose latest: %v; want a refusal of the newest checkpoint pointing to --force", err)
	}
	out, err := dispose("latest", "--force")
	if err != nil || !strings.Contains(out, "disposed of checkpoint "+strconv.Itoa(chkID(newest))+` of job "wc"`) {
		t.Fatalf("--dispose latest --force: %v\n%s; want checkpoint %d disposed of", err, out, chkID(newest))
	}
	if _, err := os.Stat(newest); !os.IsNotExist(err) {
		t.Fatalf("%s survived --dispose latest --force: %v", newest, err)
	}
}

// entries returns the names in directory dir, sorted, separated by spaces.
func entries(t *testing.T, dir string) string {
	t.Helper()
	list, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}
