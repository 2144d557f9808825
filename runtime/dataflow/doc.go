// Package dataflow runs stateful stream jobs: replayable sources, stateless
// transformations, key-by over key groups, keyed operators whose typed state lives in a
// state backend, and transactional sinks, with aligned checkpoint barriers.
//
// A job is a chain of stages. Stage 0 is a source and the stateless transformations after
// it; every KeyBy starts a new stage headed by a keyed operator. The last stage ends in a
// sink. Each stage runs as Parallelism subtasks; records cross stages in batches.
//
// The package owns one attempt of a job (Run): building its subtasks and restoring their
// state (attempt.go, redistribute.go), the exchange of batches and barriers between the
// stages (exchange.go, output.go, tasks.go), the checkpoint coordinator (coordinator.go),
// draining (drain.go), the commit fence (fence.go) and the teardown watchdog
// (watchdog.go). Whether a failed attempt runs again is not its decision: it marks the
// failures no restart can fix with restart.Permanent, and the runner asks the restart
// strategy about the others. It reports what happens, the checkpoints' progress and every
// subtask's record counts, through Events (events.go), which the runner wires to the
// job's monitor.
//
// dataflow is the engine the runner drives: it must never import runtime/monitor (that
// would link Prometheus and the web page into the engine; report through Events), nor
// the runner (runtime/runner), the plugin host (runtime/pluginhost), cmd/... or a plugin
// (nothing under plugins/). The dependency test (internal/deps) checks it.
package dataflow
