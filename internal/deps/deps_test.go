package deps

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const (
	repo      = "github.com/flowstate/flowstate"
	sdkModule = repo + "/sdk"
	plugins   = repo + "/plugins/"
	registry  = repo + "/plugins/builtin"
	// shared is the code the built-in plugins share (plugins/internal/fsys, the S3 client
	// of fsstorage and disaggregated): any plugin may import it; it is no plugin itself.
	shared = repo + "/plugins/internal"
	// leaf names the built-in plugins for the runtime without linking them.
	leaf   = repo + "/runtime/builtins"
	runner = repo + "/cmd/runner"
	config = repo + "/runtime/config"
	// flinkKeys is the catalog of Flink's keys beside config, which config imports.
	flinkKeys = config + "/flinkkeys"
)

// pluginLibraries are the modules the built-in plugins link that the runner binary, which
// runs every plugin out of process, must not.
var pluginLibraries = []string{"github.com/syndtr/goleveldb", "github.com/minio/minio-go"}

// natsServer is the NATS server module: the JetStream connectors' unit tests start it in
// process, but no package outside tests links it (the runner talks to a server over the
// network, and the e2e tests start the real binary).
const natsServer = "github.com/nats-io/nats-server"

// sdkRequires are the only modules the SDK's go.mod may require directly.
var sdkRequires = []string{
	"github.com/hashicorp/go-hclog",
	"github.com/hashicorp/go-plugin",
	"google.golang.org/grpc",
	"google.golang.org/protobuf",
}

// hostEnd are the SDK's packages a plugin binary must not link.
var hostEnd = []string{sdkModule + "/host", sdkModule + "/internal/client"}

// The SDK's other layers: the contract a plugin author reads, the plugin end of the wire
// (which a plugin's main calls), the protocol, and what both ends share.
const (
	contract  = sdkModule
	serverEnd = sdkModule + "/server"
	protocol  = sdkModule + "/internal/proto"
	converter = sdkModule + "/internal/convert"
	demuxer   = sdkModule + "/internal/demux"
	combiner  = sdkModule + "/optional"
	grpcPkgs  = "google.golang.org/grpc"
)

// sdkLayers are the arrows between the SDK's layers that must never exist: each package
// (not its tests) reaches none of the packages (or the packages below them) listed.
var sdkLayers = []struct {
	from, why string
	never     []string
}{
	{contract, "the contract holds interfaces, types, errors and options only", []string{grpcPkgs, protocol, serverEnd, converter, demuxer, hostEnd[0], hostEnd[1]}},
	{serverEnd, "the plugin end never links the host end", hostEnd},
	{hostEnd[0], "the host end never links the plugin end", []string{serverEnd}},
	{hostEnd[1], "the host end never links the plugin end", []string{serverEnd}},
	{converter, "the converters serve both ends and know neither", []string{serverEnd, hostEnd[0], hostEnd[1]}},
	{demuxer, "the demultiplexer knows nothing of the SDK", []string{sdkModule}},
	{combiner, "the combiner of optional interfaces needs the contract only", []string{grpcPkgs, protocol, serverEnd, hostEnd[0], hostEnd[1]}},
}

// pkg is what go list says of one package (or one test variant of it).
type pkg struct {
	ImportPath string   // "p", or "p [q.test]" for a variant compiled for q's tests
	ForTest    string   // q, for such a variant
	Imports    []string // as ImportPath names them
	Standard   bool
	Module     *struct{ Path string }
}

// path is the import path of the package p is or tests: without a variant's suffix and
// without the ".test" of a test's main package.
func (p pkg) path() string { return pathOf(p.ImportPath) }

// test reports whether p is compiled only for tests: a test variant or a test's main.
func (p pkg) test() bool { return p.ForTest != "" || strings.HasSuffix(p.ImportPath, ".test") }

// pathOf returns the import path of the package an ImportPath of go list names; an
// external test package (x_test) counts as the package x it tests.
func pathOf(id string) string {
	path, _, _ := strings.Cut(id, " ")
	return strings.TrimSuffix(strings.TrimSuffix(path, ".test"), "_test")
}

// graph is the packages go list found, by ImportPath.
type graph map[string]pkg

// root returns the repository's root directory.
func root(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// list runs go list -deps -test -json ./... in dir.
func list(t *testing.T, dir string) graph {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-test", "-json=ImportPath,ForTest,Imports,Standard,Module", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.Bytes())
	}
	g := graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list in %s: %v", dir, err)
		}
		g[p.ImportPath] = p
	}
	if len(g) == 0 {
		t.Fatalf("go list in %s found no packages", dir)
	}
	return g
}

// reach returns, for every package reachable from start through imports (start
// included), the chain of imports that reaches it first; it does not go on from a
// package for which stop returns true.
func (g graph) reach(start string, stop func(pkg) bool) map[string][]string {
	chains := map[string][]string{start: {start}}
	queue := []string{start}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		p := g[id]
		if id != start && stop(p) {
			continue
		}
		for _, imp := range p.Imports {
			if _, seen := chains[imp]; !seen {
				chains[imp] = append(slices.Clone(chains[id]), imp)
				queue = append(queue, imp)
			}
		}
	}
	return chains
}

// under reports whether path is dir or a package below it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// pluginOf returns the plugin a package path of the repository belongs to: "hashmap" for
// plugins/hashmap/..., "internal" for the code they share (plugins/internal/...), "" for
// anything else.
func pluginOf(path string) string {
	rest, ok := strings.CutPrefix(path, plugins)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// violations are the arrows a test found, each with the first chain of imports found.
type violations map[string][]string

func (v violations) add(what string, chain []string) {
	if _, ok := v[what]; !ok {
		v[what] = chain
	}
}

// report fails t with every violation, in order.
func (v violations) report(t *testing.T) {
	for _, what := range slices.Sorted(maps.Keys(v)) {
		t.Errorf("%s\n\t%s", what, strings.Join(v[what], "\n\t-> "))
	}
}

// check fails t with the arrows found in g: for every package from selects (what names
// them), each package it reaches for which bad returns a description; it does not go on
// past a package for which stop returns true.
func check(t *testing.T, g graph, what string, from, stop func(pkg) bool, bad func(from pkg, path string) string) {
	t.Helper()
	v := violations{}
	checked := 0
	for id, p := range g {
		if !from(p) {
			continue
		}
		checked++
		for dep, c := range g.reach(id, stop) {
			if d := bad(p, pathOf(dep)); d != "" {
				v.add(d, c)
			}
		}
	}
	if checked == 0 {
		t.Fatalf("go list found none of %s", what)
	}
	v.report(t)
}

func none(pkg) bool { return false }

// moduleReachesOnly fails t when a package of module (named what), tests included,
// reaches a package of this repository that is not under one of allowed.
func moduleReachesOnly(t *testing.T, g graph, module, what string, allowed ...string) {
	t.Helper()
	inModule := func(p pkg) bool { return p.Module != nil && p.Module.Path == module }
	check(t, g, what, inModule, none, func(_ pkg, path string) string {
		if under(path, repo) && !slices.ContainsFunc(allowed, func(a string) bool { return under(path, a) }) {
			return what + " reaches " + path
		}
		return ""
	})
}

// TestSDKImportsOnlyItsModule: no package of the SDK module, tests included, reaches a
// package of the repository outside the module, and the module requires only what a plugin
// author's go.mod should pull in.
func TestSDKImportsOnlyItsModule(t *testing.T) {
	dir := filepath.Join(root(t), "sdk")
	moduleReachesOnly(t, list(t, dir), sdkModule, "the SDK", sdkModule)
	out, err := exec.Command("go", "mod", "edit", "-json", filepath.Join(dir, "go.mod")).Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Module  struct{ Path string }
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	if mod.Module.Path != sdkModule {
		t.Errorf("sdk/go.mod is module %q, want %q", mod.Module.Path, sdkModule)
	}
	for _, r := range mod.Require {
		if !r.Indirect && !slices.Contains(sdkRequires, r.Path) {
			t.Errorf("sdk/go.mod requires %s; the SDK may require only %v", r.Path, sdkRequires)
		}
		if under(r.Path, repo) {
			t.Errorf("sdk/go.mod requires %s, a module of this repository", r.Path)
		}
	}
}

// TestSDKLayersStayApart: the contract (package sdk) reaches neither gRPC, nor the protocol,
// nor the server, nor the host end; the plugin end (sdk/server) and the host end (sdk/host,
// sdk/internal/client) never reach each other; the converters and the demultiplexer both
// ends share reach neither end; the combiner of optional interfaces needs the contract
// only.
func TestSDKLayersStayApart(t *testing.T) {
	g := list(t, filepath.Join(root(t), "sdk"))
	v := violations{}
	for _, l := range sdkLayers {
		if _, ok := g[l.from]; !ok {
			t.Fatalf("go list found no package %s", l.from)
		}
		for dep, c := range g.reach(l.from, none) {
			path := pathOf(dep)
			if path == l.from {
				continue
			}
			for _, n := range l.never {
				if under(path, n) {
					v.add(l.from+" reaches "+path+" ("+l.why+")", c)
				}
			}
		}
	}
	v.report(t)
}

// TestPluginsImportNoRuntimeNorOtherPlugins: a plugin, its tests included, reaches
// neither the runtime nor another plugin (the code the plugins share, plugins/internal, is
// no plugin: each may import it, and it reaches no plugin either); its binary does not
// link the SDK's host end.
func TestPluginsImportNoRuntimeNorOtherPlugins(t *testing.T) {
	isPlugin := func(p pkg) bool {
		name := pluginOf(p.path())
		return name != "" && name != "builtin" // the registry imports them all
	}
	check(t, list(t, root(t)), "the plugins", isPlugin, none, func(p pkg, path string) string {
		own, other := pluginOf(p.path()), pluginOf(path)
		switch {
		case under(path, repo+"/runtime"):
			return "plugin " + own + " reaches the runtime: " + path
		case under(path, shared) && !under(p.path(), shared):
			return ""
		case other != "" && other != own:
			return "plugin " + own + " reaches plugin " + other + ": " + path
		case !p.test() && slices.ContainsFunc(hostEnd, func(h string) bool { return under(path, h) }):
			return "plugin " + own + " links the SDK's host end: " + path
		}
		return ""
	})
}

// TestRuntimeReachesPluginsOnlyThroughTheRegistry: the runtime's packages reach a plugin
// only through plugins/builtin, the registry of the built-in plugins. (Its tests may wire
// built-in plugins in-process, as cmd/ and examples do.)
func TestRuntimeReachesPluginsOnlyThroughTheRegistry(t *testing.T) {
	isRuntime := func(p pkg) bool { return under(p.path(), repo+"/runtime") && !p.test() }
	viaRegistry := func(p pkg) bool { return under(p.path(), registry) }
	check(t, list(t, root(t)), "the runtime's packages", isRuntime, viaRegistry, func(_ pkg, path string) string {
		if under(path, repo+"/plugins") && !under(path, registry) {
			return "the runtime reaches " + path + " not through " + registry
		}
		return ""
	})
}

// TestThirdPartyExampleNeedsOnlyTheSDK: the example plugin, a module of its own as a third
// party's is, reaches nothing of this repository but the SDK module, tests included.
func TestThirdPartyExampleNeedsOnlyTheSDK(t *testing.T) {
	const example = repo + "/examples/thirdparty"
	moduleReachesOnly(t, list(t, filepath.Join(root(t), "examples", "thirdparty")), example, "the third-party example", example, sdkModule)
}

// TestRunnerLinksNoPluginCode: the runner binary runs its plugins out of process, so it
// links no package under plugins/ and none of the libraries they use (goleveldb,
// minio-go); what it knows of the built-ins comes from the leaf runtime/builtins.
func TestRunnerLinksNoPluginCode(t *testing.T) {
	g := list(t, root(t))
	if _, ok := g[runner]; !ok {
		t.Fatalf("go list found no %s", runner)
	}
	v := violations{}
	for dep, c := range g.reach(runner, none) {
		path := pathOf(dep)
		switch {
		case under(path, repo+"/plugins"):
			v.add("the runner binary links plugin code: "+path, c)
		case slices.ContainsFunc(pluginLibraries, func(l string) bool { return under(path, l) }):
			v.add("the runner binary links a plugin's library: "+path, c)
		}
	}
	v.report(t)
}

// TestNoPackageLinksTheNATSServer: no package of the repository, its tests aside, reaches
// the NATS server, so neither the runner binary nor a program built on the runtime links
// it; the runner reaches the JetStream connectors, which use the client only.
func TestNoPackageLinksTheNATSServer(t *testing.T) {
	g := list(t, root(t))
	if _, ok := g[runner]; !ok {
		t.Fatalf("go list found no %s", runner)
	}
	check(t, g, "packages", func(p pkg) bool { return !p.test() && under(p.path(), repo) }, none, func(p pkg, path string) string {
		if under(path, natsServer) {
			return p.path() + " links the NATS server " + path
		}
		return ""
	})
	if _, ok := g.reach(runner, none)[repo+"/runtime/connectors/jetstream"]; !ok {
		t.Errorf("the runner binary does not reach the JetStream connectors: this test checks nothing it links")
	}
}

// TestConfigImportsNoPlugin: runtime/config and the packages beside it under
// runtime/config/, their tests included, reach nothing under plugins/ (not even the
// registry): the configuration names the built-ins through runtime/builtins.
func TestConfigImportsNoPlugin(t *testing.T) {
	isConfig := func(p pkg) bool { return under(p.path(), config) }
	check(t, list(t, root(t)), "runtime/config", isConfig, none, func(p pkg, path string) string {
		if under(path, repo+"/plugins") {
			return p.path() + " reaches " + path
		}
		return ""
	})
}

// TestBuiltinsIsALeaf: runtime/builtins, which the runner binary links, imports nothing at
// all, so that naming the built-ins can never pull in their code.
func TestBuiltinsIsALeaf(t *testing.T) {
	g := list(t, root(t))
	p, ok := g[leaf]
	if !ok {
		t.Fatalf("go list found no %s", leaf)
	}
	if len(p.Imports) > 0 {
		t.Errorf("%s imports %v; it must import nothing", leaf, p.Imports)
	}
}

// TestFlinkKeysImportsOnlyBuiltins: runtime/config/flinkkeys, the catalog of Flink's keys
// that config reads, reaches nothing of the repository but runtime/builtins, tests
// included: not config (which imports it), nor the SDK, nor a plugin.
func TestFlinkKeysImportsOnlyBuiltins(t *testing.T) {
	isCatalog := func(p pkg) bool { return p.path() == flinkKeys }
	check(t, list(t, root(t)), flinkKeys, isCatalog, none, func(p pkg, path string) string {
		if under(path, repo) && path != flinkKeys && path != leaf {
			return p.path() + " reaches " + path
		}
		return ""
	})
}

// layers are, for packages of the runtime, what each must never reach (its tests aside):
// the engine neither the monitor, which links Prometheus and the web page (it reports
// through dataflow.Events), nor what drives it; the restart strategy, below everything
// that fails a job, none of those; neither reaches a plugin. The connectors report what
// they measure through dataflow.ConnectorEvents, so they reach neither the monitor nor
// Prometheus either.
var layers = map[string][]string{
	repo + "/runtime/connectors":           {repo + "/runtime/monitor", "github.com/prometheus", repo + "/runtime/runner", repo + "/runtime/pluginhost", repo + "/cmd", repo + "/plugins"},
	repo + "/runtime/connectors/jetstream": {repo + "/runtime/monitor", "github.com/prometheus", repo + "/runtime/runner", repo + "/runtime/pluginhost", repo + "/cmd", repo + "/plugins"},
	repo + "/runtime/dataflow":             {repo + "/runtime/monitor", "github.com/prometheus", repo + "/runtime/runner", repo + "/runtime/pluginhost", repo + "/cmd", repo + "/plugins"},
	repo + "/runtime/restart":              {repo + "/runtime/dataflow", repo + "/runtime/monitor", repo + "/runtime/runner", repo + "/runtime/pluginhost", repo + "/cmd", repo + "/plugins"},
}

// TestEngineAndRestartStayBelowTheRunner: runtime/dataflow and the connectors reach
// neither the monitor nor Prometheus, nor the runner, the plugin host or a command;
// runtime/restart reaches none of them and not the engine either.
func TestEngineAndRestartStayBelowTheRunner(t *testing.T) {
	layered := func(p pkg) bool { _, ok := layers[p.path()]; return ok && !p.test() }
	check(t, list(t, root(t)), "runtime/dataflow, runtime/connectors and runtime/restart", layered, none, func(p pkg, path string) string {
		for _, bad := range layers[p.path()] {
			if under(path, bad) {
				return p.path() + " reaches " + path
			}
		}
		return ""
	})
}

// mustNotImport lists, for packages of the runtime, what they must never import: ownership
// stands below the plugin session, which stands below the runner, and neither knows the
// checkpoint store or the monitor (runtime/ownership's and runtime/session's doc); the
// session does not know the engine either; the group of runners (runtime/cluster) knows
// none of the engine, the plugins, the session, the monitor or the runner.
var mustNotImport = map[string][]string{
	repo + "/runtime/ownership": {
		repo + "/runtime/dataflow", repo + "/runtime/monitor", repo + "/runtime/pluginhost",
		repo + "/runtime/session", repo + "/runtime/config", repo + "/runtime/checkpoint", repo + "/runtime/runner",
	},
	repo + "/runtime/session": {
		repo + "/runtime/monitor", repo + "/runtime/checkpoint", repo + "/runtime/runner", repo + "/runtime/dataflow",
	},
	repo + "/runtime/cluster": {
		repo + "/runtime/dataflow", repo + "/runtime/monitor", repo + "/runtime/pluginhost",
		repo + "/runtime/session", repo + "/runtime/runner",
	},
}

// TestRunnerPathImportsOneWay: the runner's path goes one way, runner -> session ->
// ownership: neither of the lower two imports what mustNotImport names for it, nor the
// other's user (ownership reaches nothing of the runtime above it at all).
func TestRunnerPathImportsOneWay(t *testing.T) {
	g := list(t, root(t))
	for from, banned := range mustNotImport {
		p, ok := g[from]
		if !ok {
			t.Fatalf("go list found no %s", from)
		}
		for _, imp := range p.Imports {
			for _, b := range banned {
				if under(imp, b) {
					t.Errorf("%s imports %s", from, imp)
				}
			}
		}
	}
	// ownership's whole reach: nothing of the runtime but what it stands on.
	check(t, g, "runtime/ownership", func(p pkg) bool { return p.path() == repo+"/runtime/ownership" && !p.test() }, none, func(_ pkg, path string) string {
		if under(path, repo+"/runtime") && !under(path, repo+"/runtime/ownership") && !under(path, repo+"/runtime/progress") {
			return "runtime/ownership reaches " + path
		}
		return ""
	})
}

// natsTest is the harness that starts real NATS servers for tests.
const natsTest = repo + "/internal/natstest"

// TestNATSHarnessIsForTestsOnly: internal/natstest, which starts nats-server processes and
// kills them, is reached by tests only, never by a package a binary links; and it reaches
// nothing of the repository but the test helpers internal/testwait and internal/testcert
// and the stream reader internal/jsread, so the connectors' tests can use it.
func TestNATSHarnessIsForTestsOnly(t *testing.T) {
	g := list(t, root(t))
	if _, ok := g[natsTest]; !ok {
		t.Fatalf("go list found no %s", natsTest)
	}
	built := func(p pkg) bool { return !p.test() && under(p.path(), repo) && p.path() != natsTest }
	check(t, g, "the repository's packages", built, none, func(p pkg, path string) string {
		if under(path, natsTest) {
			return p.path() + " (not a test) reaches " + natsTest
		}
		return ""
	})
	allowed := []string{natsTest, repo + "/internal/testwait", repo + "/internal/testcert", repo + "/internal/jsread"}
	check(t, g, natsTest, func(p pkg) bool { return p.path() == natsTest }, none, func(p pkg, path string) string {
		if under(path, repo) && !slices.Contains(allowed, path) {
			return p.path() + " reaches " + path
		}
		return ""
	})
}
