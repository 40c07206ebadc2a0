package link_test

import (
	"os/exec"
	"strings"
	"testing"
)

// m is the module's path; a package's path in the table is m+"its folder".
const m = "github.com/lnk-dev/link/"

// noDriver is what a package that reads or routes conversations through
// the store must not link: a driver registers itself (store/driver), so
// the registry, the router and every reader know each by what it
// registered, never by its package or its files.
var noDriver = map[string]string{
	m + "store/log":     "a driver registers its name and files itself (store/driver); its readers ask the registry",
	m + "store/compact": "a driver registers its name and files itself (store/driver); its readers ask the registry",
	m + "store/sqlite":  "a driver registers its name itself, and runs in its plugin in Link's programs",
	m + "store/gcs":     "a driver registers its name itself, and runs in its plugin in Link's programs",
}

// layers is what each package must not link (its imports, and theirs), each
// with its reason: the layers of docs/architecture.md, held. A path ending
// in "/..." is that package and every one under it; m+"..." is every
// package of the module.
var layers = []struct {
	pkg string            // a package, or every package under one (".../...")
	bad map[string]string // a package it must not link: why
}{
	{m + "contract", map[string]string{
		m + "...": "contract is the contract's rules as pure code, the bottom layer: every part builds on it, so it builds on none",
	}},
	{m + "internal/...", map[string]string{
		m + "store/...":   "internal/ is the shared plumbing below the store: fsx, jsonx, recovery are the store's own parts",
		m + "harness/...": "internal/ is shared by Link Harness and the hub alike",
		m + "hub/...":     "internal/ is shared by Link Harness and the hub alike",
		m + "cmd/...":     "only cmd/ wires programs together",
	}},
	{m + "acp", map[string]string{
		m + "store/...":   "the wire knows no conversation: an Agent keeps its own",
		m + "harness/...": "the wire is Link Harness's and the hub's alike",
		m + "hub/...":     "the wire is Link Harness's and the hub's alike",
	}},
	{m + "endpoint", map[string]string{
		m + "store/...":   "the endpoint proves, routes and upgrades; what is said after is its handler's",
		m + "harness/...": "the endpoint is Link Harness's and the hub's alike",
		m + "hub/...":     "the endpoint is Link Harness's and the hub's alike",
	}},
	{m + "conformance", map[string]string{
		m + "acp":         "the kit speaks the wire itself, trusting none of the code it checks",
		m + "endpoint":    "the kit speaks the wire itself, trusting none of the code it checks",
		m + "store/...":   "the kit checks an endpoint from outside",
		m + "harness/...": "the kit checks an endpoint from outside",
		m + "hub/...":     "the kit checks an endpoint from outside",
	}},
	{m + "store", map[string]string{
		m + "store/...": "the root is the seam (the conversation interface, its capabilities, the event, the errors a caller branches on): the registry, the router, the drivers and the rest are built on it, never under it",
	}},
	{m + "store/driver", noDriver},
	{m + "store/router", noDriver},
	{m + "store/transcript", noDriver},
	{m + "store/convert", noDriver},
	{m + "store/gcs", map[string]string{
		m + "store/folder": "a bucket keeps its tools object itself (store.ParseTools reads it): a local folder's files aren't its",
	}},
	{m + "harness", noDriver},
	{m + "store/...", map[string]string{
		m + "harness/...": "the store and its drivers are below every reader of a conversation: a plugin (lnk-sqlite) links a driver without the turn",
		m + "hub/...":     "the store and its drivers are below every reader of a conversation",
		m + "memory/...":  "memory reads conversations through the store, never the other way",
		m + "model/...":   "an event is the store's own type; no provider is needed to keep one",
		m + "tools/...":   "tools are MCP servers reached over the wire, above the store",
		m + "cmd/...":     "only cmd/ wires drivers together (cmd/internal/drivers)",
	}},
	{m + "model/...", map[string]string{
		m + "store/...":   "the provider seam knows a request and its answer, not how a conversation is kept",
		m + "harness/...": "a provider is called by the harness, never the other way",
		m + "acp":         "a provider speaks to a model, not to Link's bridge",
	}},
	{m + "hub/...", map[string]string{
		m + "harness/...": "Harness Hub serves another program's harness, never Link Harness",
		m + "store/...":   "the hub keeps no conversation: its harness does, and the hub's own files are its sessions and answers",
	}},
	{m + "harness/...", map[string]string{
		m + "hub/...":    "Link Harness and Harness Hub are two harnesses side by side; neither is built on the other",
		m + "tools/...":  "Link Harness reaches its tools over MCP (harness/mcptools), never their code",
		m + "memory/...": "Link Memory is a tool: reached over MCP, never linked",
		m + "cmd/...":    "only cmd/ wires programs together; the harness takes plain structs",
	}},
	{m + "memory/...", map[string]string{
		m + "harness/...":   "Link Memory is a tool of its own, reading conversations through the store",
		m + "hub/...":       "Link Memory is a tool of its own, reading conversations through the store",
		m + "store/log":     noDriver[m+"store/log"],
		m + "store/compact": noDriver[m+"store/compact"],
		m + "store/sqlite":  noDriver[m+"store/sqlite"],
		m + "store/gcs":     noDriver[m+"store/gcs"],
	}},
	{m + "harness/mcptools", map[string]string{
		m + "harness":   "the tools fill the harness's seam (harness.Tools) without linking it, so the hub's adapter, which uses them, doesn't",
		m + "store/...": "an agent's tool-lists.json is a path it is given, so the hub's adapter links no store",
	}},
	{m + "cmd/lnk-acp", map[string]string{
		m + "harness":   "the hub's adapter serves Claude Code, Codex or Gemini CLI: Link Harness isn't in it",
		m + "store/...": "the hub's adapter keeps no conversation: its harness does",
	}},
	{m + "tools/...", map[string]string{
		m + "harness/...": "Link's tools are MCP servers of their own, reaching an agent over its endpoint (tools/send), never its harness's code",
		m + "hub/...":     "Link's tools are MCP servers of their own, reaching an agent over its endpoint",
	}},
	{m + "cmd/lnk-link-harness", map[string]string{
		m + "store/sqlite":                           "spec: \"A conversation kept by another driver than the spec's runs that driver in Link harness's sandbox\": its plugin, lnk-sqlite, behind the store bridge",
		m + "store/gcs":                              "spec: the same, lnk-gcs",
		"cloud.google.com/go/storage/...":            "Cloud Storage's SDK, gRPC and auth are only its plugin's: Link Harness stays small and quick to start",
		"modernc.org/sqlite/...":                     "SQLite is only its driver's plugin's (and memory's index, in lnk)",
		"github.com/openai/openai-go/...":            "a provider speaks its API over model/sse, without its SDK: the SDKs' package inits cost an idle agent 10 MB (docs/decisions/038-idle-memory.md)",
		"github.com/anthropics/anthropic-sdk-go/...": "a provider speaks its API over model/sse, without its SDK (docs/decisions/038-idle-memory.md)",
	}},
	{m + "cmd/lnk", map[string]string{
		m + "store/sqlite":                "lnk runs the SQLite driver in its plugin, lnk-sqlite, behind the store bridge",
		m + "store/gcs":                   "lnk runs the Cloud Storage driver in its plugin, lnk-gcs, behind the store bridge",
		"cloud.google.com/go/storage/...": "a fresh machine's go build ./cmd/lnk downloads and builds none of Cloud Storage's SDK, gRPC and auth",
	}},
}

// imports is what a package must not import itself (go list's Imports,
// not theirs), each with its reason: what would reach its API.
var imports = []struct {
	pkg string
	bad map[string]string
}{
	{m + "store", map[string]string{
		"golang.org/x/sys/unix": "the seam's API is the same on every system: a folder's stat times are store/internal/foldertime's and the router's",
		"syscall":               "the seam's API is the same on every system",
	}},
}

// matches says whether path is pattern: the package itself, or one under
// it for a pattern ending in "/...".
func matches(pattern, path string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == dir || strings.HasPrefix(path, dir+"/")
	}
	return path == pattern
}

// TestLayers: no package links what its layer forbids (go list's Deps:
// what it imports and what they import, its tests' imports aside).
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Deps \" \"}}|{{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	deps, direct := map[string][]string{}, map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		deps[f[0]], direct[f[0]] = strings.Fields(f[1]), strings.Fields(f[2])
	}
	if _, ok := deps[m+"store"]; !ok {
		t.Fatalf("go list ./... named %d packages, without %sstore", len(deps), m)
	}
	for _, l := range layers {
		found := false
		for pkg, ds := range deps {
			if !matches(l.pkg, pkg) {
				continue
			}
			found = true
			for _, d := range ds {
				for bad, why := range l.bad {
					if matches(bad, d) {
						t.Errorf("%s links %s: %s", pkg, d, why)
					}
				}
			}
		}
		if !found {
			t.Errorf("no package is %s: the table names one the module no longer has", l.pkg)
		}
	}
	for _, l := range imports {
		ds, ok := direct[l.pkg]
		if !ok {
			t.Errorf("no package is %s: the table of imports names one the module no longer has", l.pkg)
		}
		for _, d := range ds {
			if why, bad := l.bad[d]; bad {
				t.Errorf("%s imports %s: %s", l.pkg, d, why)
			}
		}
	}
}
