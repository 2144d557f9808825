package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/wordcheck"
)

// writeConfig writes a configuration file from structured values (flat Flink keys).
func writeConfig(t *testing.T, path string, kv map[string]any) {
	t.Helper()
	b, err := yaml.Marshal(kv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// finishedJob is a word count that ran to its end with many retained checkpoints.
type finishedJob struct {
	dir, input, output, config, checkpoints string
	conf                                    map[string]any
	expected                                map[string]int64
}

// runFinished runs a rate-limited word count to its end on fsstorage, keeping every
// checkpoint, and checks its output.
func runFinished(t *testing.T) *finishedJob {
	t.Helper()
	dir := t.TempDir()
	j := &finishedJob{dir: dir, input: filepath.Join(dir, "input.txt"), output: filepath.Join(dir, "out"),
		config: filepath.Join(dir, "config.yaml"), checkpoints: filepath.Join(dir, "checkpoints")}
	if err := wordcheck.WriteText(j.input, 1<<20, 5000, 11); err != nil {
		t.Fatal(err)
	}
	var err error
	if j.expected, err = wordcheck.Expected(j.input); err != nil {
		t.Fatal(err)
	}
	j.conf = map[string]any{
		"state.backend.type":                   "hashmap",
		"execution.checkpointing.storage":      "filesystem",
		"execution.checkpointing.dir":          j.checkpoints,
		"execution.checkpointing.interval":     "100ms",
		"execution.checkpointing.num-retained": 100,
		"restart-strategy.type":                "none",
		"job.name":                             "wc",
		"job.type":                             "wordcount",
		"job.parallelism":                      2,
		"job.input":                            j.input,
		"job.output":                           j.output,
		"job.rate":                             12000,
	}
	writeConfig(t, j.config, j.conf)
	r := j.run(t)
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 30))
	}
	j.check(t, r.out.String())
	if n := len(j.completed(t)); n < 4 {
		t.Fatalf("%d checkpoints completed, want at least 4 to restore older ones", n)
	}
	return j
}

func (j *finishedJob) run(t *testing.T, extra ...string) *runner {
	return startRunner(t, append([]string{"run", "--config", j.config, "--plugin-dir", testbin.PluginDir(t)}, extra...)...)
}

func (j *finishedJob) check(t *testing.T, logs string) {
	t.Helper()
	if err := wordcheck.Check(j.expected, j.output); err != nil {
		t.Fatalf("%v\nrunner output:\n%s", err, tail(logs, 40))
	}
}

// completed returns the job's checkpoint directories that have metadata, oldest first.
func (j *finishedJob) completed(t *testing.T) []string {
	t.Helper()
	metas, err := filepath.Glob(filepath.Join(j.checkpoints, "wc", "chk-*", "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, m := range metas {
		dirs = append(dirs, filepath.Dir(m))
	}
	sort.Slice(dirs, func(a, b int) bool { return chkID(dirs[a]) < chkID(dirs[b]) })
	return dirs
}

// newestPart returns the highest checkpoint id in the names of the committed part files.
func (j *finishedJob) newestPart(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir(j.output)
	if err != nil {
		t.Fatal(err)
	}
	newest := 0
	for _, e := range entries {
		if f := strings.Split(e.Name(), "-"); len(f) == 4 && f[0] == "part" {
			n, _ := strconv.Atoi(f[2])
			newest = max(newest, n)
		}
	}
	return newest
}

// movedAside returns the files under the output's _moved-aside-* directories.
func (j *finishedJob) movedAside(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(j.output, "_moved-aside-*", "part-*"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var restoredLine = regexp.MustCompile(`restoring from (?:the latest )?checkpoint: id=(\d+)`)

var movedLine = regexp.MustCompile(`moved aside (\d+) output files committed after checkpoint (\d+)`)

// TestOlderRestoresNeverDoubleOutput restores a finished word count from an older
// checkpoint four ways: `--from latest` after the newest _metadata was truncated, after it
// was deleted, after another checkpoint's _metadata was copied over it, and `--from` an
// explicit older checkpoint. Each time the output committed after the restored checkpoint
// is moved aside (the runner says how many files) and the committed output afterwards
// equals a failure-free run's.
func TestOlderRestoresNeverDoubleOutput(t *testing.T) {
	t.Parallel() // long and mostly waiting: it runs beside the other such tests
	cases := []struct {
		name string
		// damage breaks the newest checkpoint dirs[len-1] and returns the --from value.
		damage func(t *testing.T, dirs []string) string
		// wantWarn matches the warning about the damaged checkpoint, if any.
		wantWarn string
	}{
		{"metadata-truncated", func(t *testing.T, dirs []string) string {
			truncate(t, filepath.Join(dirs[len(dirs)-1], "_metadata"), func(n int64) int64 { return n - 7 })
			return "latest"
		}, `skipping a damaged checkpoint.*checkpoint metadata: (body is|truncated)`},
		{"metadata-deleted", func(t *testing.T, dirs []string) string {
			if err := os.Remove(filepath.Join(dirs[len(dirs)-1], "_metadata")); err != nil {
				t.Fatal(err)
			}
			return "latest"
		}, ""},
		{"metadata-copied", func(t *testing.T, dirs []string) string {
			b, err := os.ReadFile(filepath.Join(dirs[len(dirs)-2], "_metadata"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dirs[len(dirs)-1], "_metadata"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			return "latest"
		}, `skipping a damaged checkpoint.*the metadata is of checkpoint \d+, its location is of checkpoint \d+`},
		{"explicit-older", func(t *testing.T, dirs []string) string {
			return dirs[len(dirs)/2]
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := runFinished(t)
			dirs := j.completed(t)
			newest := j.newestPart(t)
			from := c.damage(t, dirs)
			r := j.run(t, "--from", from)
			if err := r.wait(t, 2*time.Minute); err != nil {
				t.Fatalf("--from %s: %v\n%s", from, err, tail(r.out.String(), 30))
			}
			out := r.out.String()
			if c.wantWarn != "" && !regexp.MustCompile(c.wantWarn).MatchString(out) {
				t.Fatalf("no warning matching %q:\n%s", c.wantWarn, tail(out, 30))
			}
			m := movedLine.FindStringSubmatch(out)
			if m == nil {
				// Nothing to move aside only when no part file is of a checkpoint after the
				// restored one (the last checkpoints of the finished run committed nothing).
				if r := restoredLine.FindStringSubmatch(out); r != nil {
					if id, _ := strconv.Atoi(r[1]); newest <= id && len(j.movedAside(t)) == 0 {
						j.check(t, out)
						return
					}
				}
				t.Fatalf("the runner did not say it moved output aside (newest part of checkpoint %d):\n%s", newest, tail(out, 30))
			}
			restored, _ := strconv.Atoi(m[2])
			aside := j.movedAside(t)
			if n, _ := strconv.Atoi(m[1]); n != len(aside) || n == 0 {
				t.Fatalf("the runner says it moved %s files, %d are aside", m[1], len(aside))
			}
			for _, f := range aside {
				if id, _ := strconv.Atoi(strings.Split(filepath.Base(f), "-")[2]); id <= restored || id > newest {
					t.Fatalf("%s moved aside, but it was committed by checkpoint %d (restored %d, newest %d)", f, id, restored, newest)
				}
			}
			j.check(t, out)
			t.Logf("restored checkpoint %d of %d; %d files moved aside", restored, chkID(dirs[len(dirs)-1]), len(aside))
		})
	}
}

// TestRestoreRefusesAnotherJob restores a word count's checkpoints into an aggregate job
// with the same job.name and checkpoint directory: the runner refuses at once, naming the
// job types, and touches neither the checkpoints nor the output.
func TestRestoreRefusesAnotherJob(t *testing.T) {
	j := runFinished(t)
	before := len(j.completed(t))
	agg := filepath.Join(j.dir, "aggregate.yaml")
	conf := map[string]any{}
	for k, v := range j.conf {
		conf[k] = v
	}
	delete(conf, "job.input")
	conf["job.type"] = "aggregate"
	conf["job.keys"] = 100
	conf["job.records"] = 300000
	conf["restart-strategy.type"] = "fixed-delay"
	conf["restart-strategy.fixed-delay.attempts"] = 5
	writeConfig(t, agg, conf)
	r := startRunner(t, "run", "--config", agg, "--from", "latest", "--plugin-dir", testbin.PluginDir(t))
	err := r.wait(t, time.Minute)
	out := r.out.String()
	if err == nil {
		t.Fatalf("an aggregate job restored a word count's checkpoint:\n%s", tail(out, 30))
	}
	if !strings.Contains(out, `taken by a "wordcount" job, this job is a "aggregate" job (job.type)`) {
		t.Fatalf("the error does not name the job types:\n%s", tail(out, 30))
	}
	if strings.Contains(out, "recovering") {
		t.Fatalf("an incompatible checkpoint went through the restart strategy:\n%s", tail(out, 30))
	}
	if after := len(j.completed(t)); after != before {
		t.Fatalf("%d checkpoints before, %d after the refused restore", before, after)
	}
	j.check(t, out)
}

// TestMistakesFailOnceUpFront starts jobs with a missing input and an output that cannot
// be created: each fails at once naming the key, without restarts.
func TestMistakesFailOnceUpFront(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(dir, "in.txt")
	if err := wordcheck.WriteText(input, 10<<10, 100, 3); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		input, output, want string
	}{
		"missing-input":       {filepath.Join(dir, "nope.txt"), filepath.Join(dir, "out"), `job.input: text source: input stat \S+nope.txt: no such file or directory`},
		"unwritable-output":   {input, filepath.Join(blocker, "out"), `job.output: file sink: output directory: mkdir \S+: not a directory`},
		"output-is-input":     {dir, dir, `job.output: bad value: job.input \(\S+\) and job.output \(\S+\) are the same directory`},
		"output-inside-input": {dir, filepath.Join(dir, "out"), `job.output: bad value: job.input \(\S+\) and job.output \(\S+\) nest: the output is inside the input`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "c.yaml")
			writeConfig(t, cfg, map[string]any{
				"execution.checkpointing.interval":      "100ms",
				"restart-strategy.fixed-delay.attempts": 50,
				"restart-strategy.fixed-delay.delay":    "1s",
				"job.name":                              "wc",
				"job.input":                             c.input,
				"job.output":                            c.output,
			})
			start := time.Now()
			r := startRunner(t, "run", "--config", cfg, "--plugin-dir", testbin.PluginDir(t))
			err := r.wait(t, time.Minute)
			out := r.out.String()
			if err == nil {
				t.Fatalf("the job ran:\n%s", tail(out, 20))
			}
			if !regexp.MustCompile(c.want).MatchString(out) {
				t.Fatalf("error does not match %q:\n%s", c.want, tail(out, 20))
			}
			if strings.Contains(out, "recovering") {
				t.Fatalf("a mistake went through the restart strategy:\n%s", tail(out, 20))
			}
			t.Logf("failed in %s", time.Since(start).Round(time.Millisecond))
		})
	}
}
