package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/runtime/runner"
)

// TestEnvironmentCodeWinsOverFile mirrors the seed's example: what is set on the
// Environment wins over the configuration file, which wins over defaults.
func TestEnvironmentCodeWinsOverFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	os.WriteFile(file, []byte("state.backend.type: leveldb\nexecution.checkpointing.storage: jobmanager\nexecution.checkpointing.num-retained: 4\n"), 0o644)
	resolve := func(set func(e *runner.Environment)) (backend, storage, cpDir, spDir string, retained int) {
		t.Helper()
		env, err := runner.NewEnvironment(file)
		if err != nil {
			t.Fatal(err)
		}
		env.UseInProcess(builtin.Constructors())
		set(env)
		host := env.Host()
		defer host.Close()
		c, err := env.Resolved(context.Background(), host)
		if err != nil {
			t.Fatal(err)
		}
		return c.StateBackend, c.CheckpointStorage, c.Checkpointing.Dir, c.Checkpointing.SavepointDir, c.Checkpointing.NumRetained
	}
	b, s, _, _, n := resolve(func(*runner.Environment) {})
	if b != "leveldb" || s != "jmstorage" || n != 4 {
		t.Fatalf("file only: %s + %s, retained %d", b, s, n)
	}
	b, s, cp, sp, n := resolve(func(e *runner.Environment) {
		e.SetStateBackend(runner.HashMapStateBackend())
		e.CheckpointConfig().SetCheckpointStorage(filepath.Join(dir, "checkpoints")) // the string shortcut
		e.SetDefaultSavepointDirectory(filepath.Join(dir, "savepoints"))
		e.CheckpointConfig().SetNumRetained(2)
	})
	if b != "hashmap" || s != "fsstorage" || cp != filepath.Join(dir, "checkpoints") || sp != filepath.Join(dir, "savepoints") || n != 2 {
		t.Fatalf("code over file: %s + %s, dir %q, savepoints %q, retained %d", b, s, cp, sp, n)
	}
	_, s, cp, _, _ = resolve(func(e *runner.Environment) {
		e.CheckpointConfig().SetCheckpointStorage(runner.JobManagerCheckpointStorage(filepath.Join(dir, "jm")))
	})
	if s != "jmstorage" || cp != filepath.Join(dir, "jm") {
		t.Fatalf("JobManagerCheckpointStorage(path): %s, dir %q", s, cp)
	}
	// The other builders: each selects its plugin with the options it was given.
	env, err := runner.NewEnvironment(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := env.Config().StateBackend; got != "leveldb" {
		t.Fatalf("Config() before any override: backend %q, the file says leveldb", got)
	}
	local := filepath.Join(dir, "ldb")
	env.UseInProcess(builtin.Constructors())
	env.SetStateBackend(runner.EmbeddedLevelDBStateBackend(local))
	env.CheckpointConfig().SetCheckpointStorage(runner.FileSystemCheckpointStorage(filepath.Join(dir, "fs")))
	host := env.Host()
	c, err := env.Resolved(context.Background(), host)
	host.Close()
	if err != nil {
		t.Fatal(err)
	}
	if c.StateBackend != "leveldb" || c.BackendOptions["localdir"] != local || c.CheckpointStorage != "fsstorage" || c.Checkpointing.Dir != filepath.Join(dir, "fs") {
		t.Fatalf("EmbeddedLevelDBStateBackend + FileSystemCheckpointStorage: %s %v + %s, dir %q", c.StateBackend, c.BackendOptions, c.CheckpointStorage, c.Checkpointing.Dir)
	}
	b, s, _, _, _ = resolve(func(e *runner.Environment) {
		e.SetStateBackend(runner.PluginStateBackend("hashmap", nil))
		e.CheckpointConfig().SetCheckpointStorage(runner.PluginCheckpointStorage("jmstorage", map[string]string{"max-state-size": "1mb"}))
	})
	if b != "hashmap" || s != "jmstorage" {
		t.Fatalf("PluginStateBackend + PluginCheckpointStorage: %s + %s", b, s)
	}

	env, _ = runner.NewEnvironment(file)
	env.CheckpointConfig().SetCheckpointStorage(42)
	if _, err := env.Resolved(context.Background(), env.Host()); err == nil {
		t.Fatal("SetCheckpointStorage(42) was accepted")
	}
}
