package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/connectors"
)

// Environment of the crash loop: `make soak` raises the number of kills.
const (
	envSoakKills = "FLOWSTATE_SOAK_KILLS" // kills per backend and storage; default 50 in all
	envS3        = "FLOWSTATE_S3_ENDPOINT"
	envSoakSeed  = "FLOWSTATE_SOAK_SEED" // the random seed of the kill moments; default the clock
)

// TestCrashLoop kills the backend plugin, the storage plugin or the runner with SIGKILL,
// chosen at random, at random moments of word count runs on hashmap and leveldb with
// file:// storage, and with s3:// storage too when FLOWSTATE_S3_ENDPOINT names an S3
// server: 50 kills spread over the cases. Before every kill the committed output holds, for every word, the counts
// 1..k exactly once (nothing duplicated, nothing skipped); at the end of each run it
// equals the failure-free result. FLOWSTATE_SOAK_KILLS raises the kills per case;
// FLOWSTATE_SOAK_SEED replays the random choices of a logged run.
func TestCrashLoop(t *testing.T) {
	t.Parallel() // long and mostly waiting: it runs beside the other such tests
	storages := soakStorages()
	kills := (50 + 2*len(storages) - 1) / (2 * len(storages)) // at least 50 in all
	if v := os.Getenv(envSoakKills); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", envSoakKills, v)
		}
		kills = n
	}
	rng := soakRand(t)
	for _, storage := range storages {
		for _, backend := range []string{"hashmap", "leveldb"} {
			t.Run(backend+"/"+storage, func(t *testing.T) {
				crashLoop(t, rng, backend, storage, kills)
			})
		}
	}
}

// TestCrashLoopDisaggregated is TestCrashLoop's loop on the disaggregated backend, with its
// tables on a file:// remote beside the file checkpoints, and in the S3 bucket of the
// checkpoints when the S3 server runs: 8 random kills of the backend plugin, the storage
// plugin or the runner per case, each checked as there.
func TestCrashLoopDisaggregated(t *testing.T) {
	t.Parallel()
	storages := soakStorages()
	rng := soakRand(t)
	for _, storage := range storages {
		t.Run(storage, func(t *testing.T) { crashLoop(t, rng, "disaggregated", storage, 8) })
	}
}

// soakStorages are the checkpoint storages the crash loops run on: file, and s3 when the
// S3 server runs.
func soakStorages() []string {
	if os.Getenv(envS3) != "" {
		return []string{"file", "s3"}
	}
	return []string{"file"}
}

// soakRand returns the random source of a crash loop's choices, seeded from
// FLOWSTATE_SOAK_SEED when it is set, and logs its seed so a run can be replayed.
func soakRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := time.Now().UnixNano()
	if v := os.Getenv(envSoakSeed); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want a number", envSoakSeed, v)
		}
		seed = n
	}
	t.Logf("random seed %d (%s=%d runs the same choices again)", seed, envSoakSeed, seed)
	rng := rand.New(rand.NewSource(seed))
	return rng
}

// crashLoop runs word counts until it has killed a process kills times.
func crashLoop(t *testing.T, rng *rand.Rand, backend, storage string, kills int) {
	done, runs := 0, 0
	byVictim := map[string]int{}
	start := time.Now()
	for done < kills {
		runs++
		if runs > 2*kills+5 {
			t.Fatalf("%d runs for %d kills: the runs end too quickly", runs, done)
		}
		s := newWordcount(t, backend, "filesystem", 4<<20, 40000, nil)
		s.edit(t, map[string]any{"restart-strategy.fixed-delay.attempts": 1000})
		remote := "file://" + filepath.Join(s.dir, "remote")
		if storage == "s3" {
			remote = "s3://" + s.onS3(t) + "/tables"
		}
		if backend == "disaggregated" {
			s.add(t, map[string]any{"state.backend.disaggregated.remote": remote, "state.backend.disaggregated.localdir": filepath.Join(s.dir, "disaggregated")})
			if storage == "s3" {
				s.add(t, map[string]any{"state.backend.disaggregated.s3.endpoint": os.Getenv(envS3), "state.backend.disaggregated.s3.access-key": "testkey",
					"state.backend.disaggregated.s3.secret-key": "testsecret12345", "state.backend.disaggregated.s3.region": "us-east-1", "state.backend.disaggregated.s3.path-style": true})
			}
		}
		r := s.run(t)
		// Kills start once the runner owns its job: a plugin killed while the runner starts
		// fails the start, as it always did; recovery is for a running job.
		if !r.owns(t) {
			t.Fatalf("run %d did not start:\n%s", runs, tail(r.out.String(), 20))
		}
		for done < kills && !r.exited() {
			time.Sleep(time.Duration(150+rng.Intn(600)) * time.Millisecond) // a random moment to kill at: what the test varies, not a wait
			if err := committedPrefix(s.expected, s.output); err != nil {
				t.Fatalf("after %d kills: %v\n%s", done, err, tail(r.out.String(), 40))
			}
			victim := []string{"backend", "storage", "runner"}[rng.Intn(3)]
			switch victim {
			case "backend", "storage":
				name := backend
				if victim == "storage" {
					name = "fsstorage"
				}
				pid := pluginOf(r.cmd.Process.Pid, name)
				if pid <= 0 {
					continue // restarting or finished: try again
				}
				syscall.Kill(pid, syscall.SIGKILL)
			case "runner":
				// --from latest needs a completed checkpoint to resume from.
				if r.exited() || !strings.Contains(r.out.String(), "checkpoint complete") {
					continue
				}
				plugins := []int{pluginOf(r.cmd.Process.Pid, backend), pluginOf(r.cmd.Process.Pid, "fsstorage")}
				r.cmd.Process.Kill()
				<-r.done
				waitGone(t, plugins, 5*time.Second)
				r = s.runWhenFree(t, "--from", "latest")
			}
			done++
			byVictim[victim]++
		}
		if err := r.wait(t, 3*time.Minute); err != nil {
			t.Fatalf("run %d failed after %d kills: %v\n%s", runs, done, err, tail(r.out.String(), 40))
		}
		s.check(t, r.out.String())
	}
	t.Logf("%d kills (%v) in %d runs, %s", done, byVictim, runs, time.Since(start).Round(time.Second))
}

// committedPrefix checks the committed output of a running word count: for every word,
// the counts seen so far are 1..k, each once, and no word is foreign to the input.
func committedPrefix(expected map[string]int64, dir string) error {
	files, err := connectors.CommittedFiles(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	seen := map[string][]int64{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			word, n, _ := strings.Cut(sc.Text(), "\t")
			c, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				fh.Close()
				return fmt.Errorf("%s: malformed line %q", f, sc.Text())
			}
			seen[word] = append(seen[word], c)
		}
		fh.Close()
	}
	for w, got := range seen {
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		for i, c := range got {
			if c != int64(i+1) {
				return fmt.Errorf("committed output: word %q has counts %v: not 1..%d each once (duplicate or lost records)", w, brief(got), len(got))
			}
		}
		if int64(len(got)) > expected[w] {
			return fmt.Errorf("committed output: word %q counted %d times, the input has it %d times", w, len(got), expected[w])
		}
	}
	return nil
}

func brief(xs []int64) string {
	if len(xs) > 10 {
		return fmt.Sprintf("%v... (%d values)", xs[:10], len(xs))
	}
	return fmt.Sprint(xs)
}
