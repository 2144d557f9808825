package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/wordcheck"
)

// rescaleJob is a built-in job run through kills and restores at other parallelisms.
type rescaleJob struct {
	dir, config, output string
}

// newRescaleJob writes the configuration of a job checkpointing every 100 ms into
// fsstorage, with a short lease so that a runner can take the job over soon after the
// one before was killed. job holds the job.* keys.
func newRescaleJob(t *testing.T, backend string, job map[string]any) *rescaleJob {
	t.Helper()
	dir := t.TempDir()
	j := &rescaleJob{dir: dir, config: filepath.Join(dir, "config.yaml"), output: filepath.Join(dir, "out")}
	conf := map[string]any{
		"state.backend.type":                    backend,
		"state.backend.leveldb.localdir":        filepath.Join(dir, "leveldb"),
		"execution.checkpointing.storage":       "filesystem",
		"execution.checkpointing.dir":           filepath.Join(dir, "checkpoints"),
		"execution.checkpointing.interval":      "100ms",
		"execution.checkpointing.num-retained":  2,
		"execution.checkpointing.savepoint-dir": filepath.Join(dir, "savepoints"),
		"restart-strategy.type":                 "fixed-delay",
		"restart-strategy.fixed-delay.attempts": 20,
		"restart-strategy.fixed-delay.delay":    "50ms",
		"job.name":                              "rescaled",
		"job.output":                            j.output,
		"job.lease.timeout":                     "2s",
	}
	for k, v := range job {
		conf[k] = v
	}
	writeConfig(t, j.config, conf)
	return j
}

// run starts a runner of the job; extra are more flags of `runner run`.
func (j *rescaleJob) run(t *testing.T, extra ...string) *runner {
	return startRunner(t, append([]string{"run", "--config", j.config, "--plugin-dir", testbin.PluginDir(t)}, extra...)...)
}

// runWhenFree starts a runner of the job once the lease of a runner killed before has
// expired (see whenFree), and fails the test if it does not take the job.
func (j *rescaleJob) runWhenFree(t *testing.T, extra ...string) *runner {
	t.Helper()
	r := whenFree(t, func(more ...string) *runner { return j.run(t, slices.Concat(extra, more)...) })
	if !r.owns(t) {
		t.Fatalf("the runner did not take the job:\n%s", tail(r.out.String(), 20))
	}
	return r
}

var checkpointLine = regexp.MustCompile(`checkpoint complete: id=(\d+) savepoint=false`)

// killAfterCheckpoints waits until r completed n checkpoints, then kills it with SIGKILL
// and waits until its plugins are gone.
func killAfterCheckpoints(t *testing.T, r *runner, n int, backend string) {
	t.Helper()
	waitMatches(t, r, checkpointLine, n, 2*time.Minute) // a runner that ends first: is the input too short for this machine?
	plugins := []int{pluginOf(r.cmd.Process.Pid, backend), pluginOf(r.cmd.Process.Pid, "fsstorage")}
	r.cmd.Process.Kill()
	<-r.done
	waitGone(t, plugins, 5*time.Second)
}

// rescaleAfterKills runs the job at the first parallelism of ps, kills it with SIGKILL
// after a few checkpoints, resumes it with `-p P --from latest` at the next, and so on;
// the last runs to the end. Each resume must say that it redistributed the source's and
// the sink's state from the parallelism before to its own.
func (j *rescaleJob) rescaleAfterKills(t *testing.T, backend string, ps ...int) {
	t.Helper()
	r := j.run(t, "-p", strconv.Itoa(ps[0]))
	if !r.owns(t) {
		t.Fatalf("the job did not start:\n%s", tail(r.out.String(), 20))
	}
	for k := 1; k < len(ps); k++ {
		killAfterCheckpoints(t, r, 3, backend)
		r = j.runWhenFree(t, "-p", strconv.Itoa(ps[k]), "--from", "latest")
		waitOutput(t, r, fmt.Sprintf("parallelism %d", ps[k]), time.Minute)
		for _, op := range []string{"source", "sink"} {
			waitMatch(t, r, regexp.MustCompile(fmt.Sprintf(`redistributed operator state: operator=%s checkpoint=\d+ from=%d to=%d`, op, ps[k-1], ps[k])), time.Minute)
		}
	}
	if err := r.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("the last run, at parallelism %d: %v\n%s", ps[len(ps)-1], err, tail(r.out.String(), 30))
	}
	// The subtasks that no longer exist left uncommitted files when they were killed: the
	// subtasks answering for them deleted them.
	entries, err := os.ReadDir(j.output)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".part-") {
			t.Fatalf("uncommitted file %s left in the output after the job finished", e.Name())
		}
	}
}

// newRescaleWordcount writes 3 MiB of text (seed picks it) and the configuration of a
// word count over it at parallelism 2, reading 8000 lines a second (about 7 s for the
// input); it returns the job, its input and the input's word counts.
func newRescaleWordcount(t *testing.T, seed int64) (*rescaleJob, string, map[string]int64) {
	t.Helper()
	input := filepath.Join(t.TempDir(), "input.txt")
	if err := wordcheck.WriteText(input, 3<<20, 20000, seed); err != nil {
		t.Fatal(err)
	}
	expected, err := wordcheck.Expected(input)
	if err != nil {
		t.Fatal(err)
	}
	j := newRescaleJob(t, "hashmap", map[string]any{
		"job.type": "wordcount", "job.input": input, "job.rate": 8000, "job.parallelism": 2,
	})
	return j, input, expected
}

// TestWordCountRescaledAfterKills kills a word count at parallelism 2 with SIGKILL after a
// few checkpoints, resumes it at 3 (`runner run -p 3 --from latest`), kills it again and
// resumes it at 1: the committed output is exactly the failure-free one.
func TestWordCountRescaledAfterKills(t *testing.T) {
	j, _, expected := newRescaleWordcount(t, 5)
	j.rescaleAfterKills(t, "hashmap", 2, 3, 1)
	if err := wordcheck.Check(expected, j.output); err != nil {
		t.Fatal(err)
	}
}

// TestAggregateRescaledAfterKills does the same to the aggregate job on leveldb, from
// parallelism 1 to 4 to 2. Its output is a line "key<TAB>sum" per event, the key's running
// sum. The expected events come from the generator's definition (event i: key
// "k<h(i) mod keys>", value i mod 100, h the mix connectors.Generator documents): as the
// values are not negative, a key's sums in ascending order are its running sums, and
// their differences must be exactly the key's values, each once.
func TestAggregateRescaledAfterKills(t *testing.T) {
	const records, keys = 240000, 40
	j := newRescaleJob(t, "leveldb", map[string]any{
		"job.type": "aggregate", "job.records": records, "job.keys": keys, "job.rate": 30000, "job.parallelism": 1,
	})
	j.rescaleAfterKills(t, "leveldb", 1, 4, 2)
	want := map[string][]int64{}
	for i := uint64(0); i < records; i++ {
		h := i * 0x9E3779B97F4A7C15
		h ^= h >> 29
		k := "k" + strconv.FormatUint(h%keys, 10)
		want[k] = append(want[k], int64(i%100))
	}
	if err := checkSums(want, j.output); err != nil {
		t.Fatal(err)
	}
}

// checkSums checks the committed running sums in dir against the values of each key.
func checkSums(want map[string][]int64, dir string) error {
	sums, _, _, err := wordcheck.Committed(dir)
	if err != nil {
		return err
	}
	for k, values := range want {
		got := sums[k]
		sort.Slice(got, func(a, b int) bool { return got[a] < got[b] })
		diffs := make([]int64, len(got))
		for i := range got {
			diffs[i] = got[i]
			if i > 0 {
				diffs[i] -= got[i-1]
			}
		}
		vs := append([]int64(nil), values...)
		sort.Slice(vs, func(a, b int) bool { return vs[a] < vs[b] })
		sort.Slice(diffs, func(a, b int) bool { return diffs[a] < diffs[b] })
		if fmt.Sprint(diffs) != fmt.Sprint(vs) {
			return fmt.Errorf("key %s: %d sums committed for %d events, or their steps are not the key's values", k, len(got), len(vs))
		}
	}
	for k := range sums {
		if _, ok := want[k]; !ok {
			return fmt.Errorf("key %s: not generated", k)
		}
	}
	return nil
}
