package explain

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/config"
)

const localMounts = "/dev/vda / ext4 rw 0 0\ntmpfs /dev/shm tmpfs rw 0 0\n" +
	"server:/export /mnt/nfs nfs4 rw 0 0\nsshfs#me@h: /mnt/with\\040space fuse.sshfs rw 0 0\n"

func TestExplainJSON(t *testing.T) {
	withMounts(t, localMounts)
	e := explainOf(t, "state.backend: filesystem\nstate.checkpoints.dir: /var/ck\nexecution.checkpointing.savepoint-dir: s3://b/sp\n")
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "state_backend", m["state_backend"], "hashmap")
	wantEqual(t, "checkpoint_storage", m["checkpoint_storage"], "fsstorage")
	wantEqual(t, "checkpoint_dir", m["checkpoint_dir"], "/var/ck")
	wantEqual(t, "savepoint_dir", m["savepoint_dir"], "s3://b/sp")
	wantEqual(t, "durable", m["durable"], true)
	wantEqual(t, "survives_machine_loss", m["survives_machine_loss"], false)
	wantEqual(t, "state_backend_durable", m["state_backend_durable"], false)
	wantEqual(t, "num_retained", m["num_retained"], 1.0)
	wantEqual(t, "interval", m["interval"], "off")
	deps, ok := m["deprecations"].([]any)
	if !ok || len(deps) != 2 {
		t.Errorf("deprecations: want an array of 2, got %#v", m["deprecations"])
	}
	if _, ok := m["warnings"].([]any); !ok {
		t.Errorf("warnings: want an array, got %#v", m["warnings"])
	}
	// Empty lists are arrays, not null.
	data, _ = json.Marshal(explainOf(t, "execution.checkpointing.interval: 1s\nexecution.checkpointing.dir: s3://b/ck\n"))
	wantContains(t, string(data), `"deprecations":[]`, `"warnings":[]`, `"survives_machine_loss":true`)
}

func TestExplainWhereStateAndCheckpointsLive(t *testing.T) {
	withMounts(t, localMounts)
	cases := []struct {
		name, in            string
		durable, survives   *bool
		working, checkpoint []string
		warnings            []string
	}{
		{"memory", "execution.checkpointing.interval: 1s\n", ptr(false), ptr(false),
			[]string{"heap of the hashmap plugin process", "A state backend alone is not durable"},
			[]string{"memory of the jmstorage plugin process", "5 MiB per state chunk"},
			[]string{"checkpoints are kept only in memory (jmstorage without a path)"}},
		{"memory with a path", "state.backend: jobmanager\nstate.checkpoints.dir: file:///var/ck\nexecution.checkpointing.interval: 1s\n", ptr(true), ptr(false),
			nil, []string{"file:///var/ck/<job>/chk-N/_metadata", "JobManagerCheckpointStorage(path)"},
			[]string{"checkpoint directory file:///var/ck is on this machine's local disk (ext4 at /)"}},
		{"fs on local disk", "execution.checkpointing.dir: /var/ck\nexecution.checkpointing.interval: 1s\n", ptr(true), ptr(false),
			nil, []string{"fsstorage", "/var/ck/<job>/chk-N/", "only as long as that disk"},
			[]string{"not the loss of this machine; use s3:// or a shared file system"}},
		{"fs on tmpfs", "execution.checkpointing.dir: /dev/shm/ck\nexecution.checkpointing.interval: 1s\n", ptr(true), ptr(false),
			nil, []string{"tmpfs (memory)"}, []string{"is on tmpfs (memory, at /dev/shm)"}},
		{"fs on s3", "execution.checkpointing.dir: s3://bucket/ck\nexecution.checkpointing.interval: 1s\n", ptr(true), ptr(true),
			nil, []string{"remote storage, which survives losing this machine"}, nil},
		{"fs on nfs", "execution.checkpointing.dir: /mnt/nfs/flowstate/ck\nexecution.checkpointing.interval: 1s\n", ptr(true), ptr(true),
			nil, []string{"network file system (nfs4 at /mnt/nfs)"}, nil},
		{"fs marked shared", "execution.checkpointing.dir: /var/ck\nexecution.checkpointing.shared-filesystem: true\nexecution.checkpointing.interval: 1s\n",
			ptr(true), ptr(true), nil, []string{"execution.checkpointing.shared-filesystem: true declares it shared storage"}, nil},
		{"leveldb on nfs", "state.backend.type: leveldb\nstate.backend.leveldb.localdir: /mnt/nfs/ldb\nexecution.checkpointing.dir: s3://b/ck\nexecution.checkpointing.interval: 1s\n",
			ptr(true), ptr(true), []string{"leveldb files at /mnt/nfs/ldb on local disk", "not a backup"}, nil,
			[]string{"config.yaml:2: state.backend.leveldb.localdir /mnt/nfs/ldb is on a network file system (nfs4 at /mnt/nfs)"}},
		{"leveldb on fuse with an escaped mount point", "state.backend: rocksdb\nstate.backend.rocksdb.localdir: /mnt/with space/ldb\nexecution.checkpointing.dir: s3://b/ck\nexecution.checkpointing.interval: 1s\n",
			ptr(true), ptr(true), nil, nil,
			[]string{"config.yaml:2: state.backend.rocksdb.localdir /mnt/with space/ldb is on a network file system (fuse.sshfs at /mnt/with space)"}},
		{"leveldb pointed at s3", "state.backend.type: leveldb\nstate.backend.leveldb.localdir: s3://b/ldb\nexecution.checkpointing.interval: 1s\n",
			ptr(false), ptr(false), nil, nil,
			[]string{"leveldb works only on local files and never reads or writes remote storage",
				"leveldb is meant for state larger than memory, but jmstorage caps each state chunk at 5 MiB"}},
		{"disaggregated on s3", "state.backend.type: disaggregated\nstate.backend.disaggregated.remote: s3://b/tables\nstate.backend.disaggregated.cache-size: 1gb\nexecution.checkpointing.dir: s3://b/ck\nexecution.checkpointing.interval: 1s\n",
			ptr(true), ptr(true), []string{"The object store holds the working state", "s3://b/tables", "cache of at most 1gb", "opens its tables in place, at any parallelism"}, nil, nil},
		{"disaggregated on a local directory", "state.backend.type: disaggregated\nstate.backend.disaggregated.remote: file:///var/tables\nexecution.checkpointing.dir: s3://b/ck\nexecution.checkpointing.interval: 1s\n",
			ptr(true), ptr(true), []string{"file:///var/tables", "cache of at most 256mb", "only if that directory does"}, nil, nil},
		{"disaggregated by default", "state.backend.type: disaggregated\nexecution.checkpointing.dir: s3://b/ck\nexecution.checkpointing.interval: 1s\n",
			ptr(true), ptr(true), []string{"under the system temp directory on this machine", "losing this machine loses them"}, nil, nil},
		{"incremental with hashmap", "execution.checkpointing.incremental: true\nexecution.checkpointing.dir: s3://b\nexecution.checkpointing.interval: 1s\n",
			ptr(true), ptr(true), nil, nil, []string{"config.yaml:1: execution.checkpointing.incremental: true has no effect with hashmap"}},
		{"no interval", "execution.checkpointing.dir: s3://b\n", ptr(true), ptr(true), nil, nil,
			[]string{"execution.checkpointing.interval is not set: no periodic checkpoints"}},
	}
	for _, tc := range cases {
		e := explainOf(t, tc.in)
		wantEqual(t, tc.name+" durable", e.Durable, tc.durable)
		wantEqual(t, tc.name+" survives machine loss", e.SurvivesMachineLoss, tc.survives)
		wantContains(t, e.WorkingState, tc.working...)
		wantContains(t, e.Checkpoints, tc.checkpoint...)
		wantContains(t, strings.Join(e.Warnings, "\n"), tc.warnings...)
		if len(tc.warnings) == 0 && len(e.Warnings) != 0 {
			t.Errorf("%s: unexpected warnings %q", tc.name, e.Warnings)
		}
		if e.StateBackendDurable {
			t.Errorf("%s: a state backend is never durable by itself", tc.name)
		}
	}
}

func TestExplainThirdPartyAndText(t *testing.T) {
	withMounts(t, localMounts)
	c := mustParse(t, "state.backend.type: tikv\nexecution.checkpointing.interval: 30s\nexecution.checkpointing.num-retained: 3\nrestart-strategy.type: none\n")
	if err := config.Resolve(c, thirdParty); err != nil {
		t.Fatal(err)
	}
	e := Config(c)
	if e.Durable != nil || e.SurvivesMachineLoss != nil {
		t.Errorf("third-party storage: durability is the plugin's, want null, got %v %v", e.Durable, e.SurvivesMachineLoss)
	}
	wantContains(t, e.Checkpoints, "stored by the tikv plugin", "serves as the storage")
	wantEqual(t, "from backend", e.StorageFromBackend, true)
	text := e.Text()
	wantContains(t, text, "Working state (state backend: tikv; chosen by: config file)",
		"Checkpoints (checkpoint storage: tikv; chosen by: the state backend, which also implements CheckpointStorage)",
		"Survive losing this machine: depends on the plugin", "Interval: every 30s",
		"The latest 3 completed checkpoints are kept", "none: on failure the job is not restarted.")
	data, _ := json.Marshal(e)
	wantContains(t, string(data), `"durable":null`, `"interval_ms":30000`)
}

// TestExplainRetention: what happens to the job's checkpoints when it is cancelled, by
// execution.checkpointing.externalized-checkpoint-retention.
func TestExplainRetention(t *testing.T) {
	e := explainOf(t, "execution.checkpointing.externalized-checkpoint-retention: DELETE_ON_CANCELLATION\n")
	wantContains(t, e.OnCancel, "the checkpoints it owns are deleted (DELETE_ON_CANCELLATION)")
	e = explainOf(t, "job.name: x\n")
	wantContains(t, e.OnCancel, "deleted (NO_EXTERNALIZED_CHECKPOINTS)")
	e = explainOf(t, "execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION\n")
	wantContains(t, e.OnCancel, "its checkpoints are kept (RETAIN_ON_CANCELLATION)")
}

// TestExplainRestore: what a run starts from and who owns a checkpoint it restores.
func TestExplainRestore(t *testing.T) {
	e := explainOf(t, "execution.state-recovery.path: latest\nexecution.state-recovery.claim-mode: CLAIM\n")
	wantContains(t, e.Restore, "resumes from the newest completed checkpoint", "claimed (CLAIM)", "--from latest resumes the job's own checkpoints")
	e = explainOf(t, "execution.state-recovery.path: latest-if-any\n")
	wantContains(t, e.Restore, "starts fresh while the job has none (execution.state-recovery.path: latest-if-any)")
}

// TestExplainRestart: the restart strategy in words, and Flink's default on a configuration
// that was not resolved.
func TestExplainRestart(t *testing.T) {
	c := mustResolve(t, `restart-strategy.type: exponentialdelay
restart-strategy.exponential-delay.initial-backoff: 2s
restart-strategy.exponential-delay.max-backoff: 2min
restart-strategy.exponential-delay.backoff-multiplier: 2.0
restart-strategy.exponential-delay.reset-backoff-threshold: 30 min
restart-strategy.exponential-delay.jitter-factor: 0
restart-strategy.exponential-delay.attempts-before-reset-backoff: 10
`)
	wantContains(t, Config(c).Restart, "exponential-delay: on failure the job restarts", "after 2s, then 2x longer", "failing after 10 restarts")
	unresolved := mustParse(t, "execution.checkpointing.interval: 1s\n")
	wantEqual(t, "default strategy with checkpointing", Config(unresolved).RestartStrategy, config.RestartExponentialDelay)
	wantEqual(t, "default strategy without", Config(mustParse(t, "")).RestartStrategy, config.RestartNone)
	wantContains(t, Config(mustParse(t, "")).Restart, "cancellation.timeout", (30 * time.Second).String())
}

// TestControlAccess: the explanation says how the control endpoint is protected.
func TestControlAccess(t *testing.T) {
	for yaml, access := range map[string]string{
		"":                        "loopback",
		"rest.address: 0.0.0.0\n": "refused",
		"rest.address: 0.0.0.0\nrest.accept-plaintext-risk: true\n":                                                   "plaintext-risk-accepted",
		"rest.address: 10.1.2.3\nrest.ssl.certificate: /etc/c.pem\nrest.ssl.key: /etc/k.pem\nrest.open-reads: true\n": "tls",
	} {
		c := mustParse(t, yaml)
		e := Config(c)
		if e.ControlAccess != access || e.ControlAccess != c.Control.Access() {
			t.Errorf("%q: access %s, want %s", yaml, e.ControlAccess, access)
		}
		if text := e.Text(); !strings.Contains(text, "Control endpoint ("+access+")") {
			t.Errorf("%q: the explanation does not say the endpoint is %s:\n%s", yaml, access, text)
		}
	}
}

// TestExplainFailureIsJSON: a configuration that does not load is described by Failed,
// one entry per problem with its key, line or flag, and kind.
func TestExplainFailureIsJSON(t *testing.T) {
	_, err := config.ParseWith([]byte("bogus: 1\nexecution.checkpointing.unaligned.enabled: true\n"), testFile, []config.Override{{Flag: "-D", Key: "job.parallelism", Value: "x"}})
	f := Failed(testFile, nil, err)
	if f.Valid || len(f.Errors) != 3 || f.Overrides == nil {
		t.Fatalf("failure %+v", f)
	}
	kinds := map[string]config.ErrorEntry{}
	for _, e := range f.Errors {
		kinds[e.Kind] = e
	}
	wantEqual(t, "unknown", kinds["unknown key"].Line, 1)
	wantEqual(t, "unsupported", kinds["not supported"].Key, "execution.checkpointing.unaligned.enabled")
	wantEqual(t, "flag", kinds["bad value"].Flag, "-D")
	wantEqual(t, "not a config error", Failed("x", nil, errors.New("read config: no such file")).Errors, []config.ErrorEntry{{Message: "read config: no such file"}})
}
