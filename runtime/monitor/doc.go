// Package monitor watches a running job: it keeps the job's checkpoint statistics with the
// semantics of Flink's checkpoint statistics tracker, counts the records of every operator
// subtask, times the calls into the plugins, and serves all of it over HTTP in the shapes
// Flink users know:
//
//   - /metrics: Prometheus' text format (Flink's metric names with a flowstate_ prefix);
//   - /jobs/<job>, /jobs/<job>/checkpoints, /jobs/<job>/checkpoints/config and
//     /jobs/<job>/checkpoints/details/<id>: JSON with the field names of Flink's REST API;
//   - /: a web page showing the job, its plugins, the throughput of each operator and the
//     checkpoint history, as Flink's web UI checkpoint tab does.
//
// The runner owns one Monitor per job and reports the job's events to it as they happen
// (JobStarted, Restarted, PluginRestarted, RestoredFrom, ...); the engine reports its
// checkpoints and record counts through dataflow.Events, which Events returns the Monitor
// as (CheckpointTriggered, SubtaskAcknowledged, CheckpointCompleted, Subtask, ...); the
// control endpoint mounts Handler. Every method is safe for concurrent use. The methods
// that report an event, and Subtask and the methods of the *Subtask it returns, do nothing
// on a nil *Monitor, so code paths without monitoring need no checks.
//
// monitor observes the engine and may import runtime/dataflow for the events' types; the
// engine must never import monitor (it would link Prometheus and the web page), and
// monitor must never import the runner (runtime/runner), the plugin host
// (runtime/pluginhost) or cmd/..., which wire it in.
package monitor
