// Package deps holds the test of the arrows that must never exist between the parts of
// this repository (docs/architecture.md, "Packages"): the SDK module imports nothing of
// the repository outside itself, and requires only go-plugin, gRPC, protobuf and hclog; a
// plugin, its tests included, imports neither the runtime nor another plugin, and its
// binary does not link the host end of the SDK; the runtime reaches the plugins only
// through the registry of built-in plugins, plugins/builtin; the third-party example
// needs nothing of the repository but the SDK; the runner's path imports one way, runner,
// then runtime/session, then runtime/ownership, which import neither the monitor nor the
// checkpoint store. The test reads the import graph with go list -deps -test.
package deps
