// Package deps holds the test of the arrows that must never exist between the parts of
// this repository (docs/architecture.md, "Packages"): the SDK module imports nothing of
// the repository outside itself, and requires only go-plugin, gRPC, protobuf and hclog; its
// contract (package sdk) reaches neither gRPC, the protocol, the server nor the host end,
// its plugin end (sdk/server) and host end (sdk/host, sdk/internal/client) never reach each
// other, and what both ends share (sdk/internal/convert, sdk/internal/demux) reaches
// neither; a plugin, its tests included, imports neither the runtime nor another plugin
// (plugins/internal, the code the plugins share, is none: any may import it),
// and its binary does not link the host end of the SDK; the runtime reaches the plugins
// only through the registry of built-in plugins, plugins/builtin, and runtime/config (with
// the packages beside it) not at all; the runner binary links no plugin code nor goleveldb
// or minio-go, no package outside tests links the NATS server (only the JetStream
// connectors' unit tests start one in process), and runtime/builtins, which names the
// built-ins for it, imports nothing; runtime/config/flinkkeys, the catalog of Flink's keys, imports nothing of the repository
// but runtime/builtins; the engine (runtime/dataflow) and the connectors (runtime/connectors/...) reach neither the monitor nor
// Prometheus, nor the runner, the plugin host, a command or a plugin, and the restart
// strategy (runtime/restart) none of those nor the engine; the runner's path imports one
// way, runner, then runtime/session, then runtime/ownership, which import neither the
// monitor nor the checkpoint store; the harness that starts real NATS servers
// (internal/natstest) is reached by tests only and reaches only the test helpers; the
// third-party example needs nothing of the repository but the SDK. The test reads the import graph with go list -deps -test. A
// further test holds every package of the three modules to a package doc comment, where
// each says what it owns and what it must never import.
//
// The package imports nothing of the repository: it reads the graph from go list instead
// of linking what it checks.
package deps
