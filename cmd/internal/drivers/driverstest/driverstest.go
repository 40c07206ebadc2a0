// Package driverstest builds the drivers' plugins for tests that keep
// conversations in them, as they are installed: lnk-<name> in one folder.
package driverstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/lnk-dev/link/cmd/internal/drivers"
)

// Module is the path of Link's module, whose cmd/lnk-<name> are the
// plugins.
const Module = "github.com/lnk-dev/link"

// GoTool is the go command, for building.
func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// Plugin is the package of the named driver's plugin.
func Plugin(name string) string { return Module + "/cmd/lnk-" + name }

// Plugins are the packages of every plugin of Link's drivers.
func Plugins() []string {
	var out []string
	for _, d := range drivers.Link {
		if d.Open == nil {
			out = append(out, Plugin(d.Name))
		}
	}
	return out
}

// Build builds the programs pkgs name (Plugins, Plugin("sqlite"),
// github.com/lnk-dev/link/cmd/lnk-link-harness...) into one folder of the
// test's own, as they are installed, so each finds the plugins beside it;
// and puts the folder first in $PATH for the test, so the test's own
// process finds them there. Without DWARF (-w): linking is most of its
// time.
func Build(t testing.TB, pkgs ...string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	cmd := exec.Command(GoTool(), append([]string{"build", "-ldflags=-w", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %v: %v\n%s", pkgs, err, out)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// PluginsOnly are what a program that runs drivers in their plugins must
// not link: the drivers run there, and Cloud Storage's SDK, which only
// its driver needs.
var PluginsOnly = []string{Module + "/store/sqlite", Module + "/store/gcs", "cloud.google.com/go/storage"}

// LinksNoPlugin fails t if the program pkg links any of PluginsOnly, or
// of more: go list of its own dependencies, not its tests'.
func LinksNoPlugin(t testing.TB, pkg string, more ...string) {
	t.Helper()
	out, err := exec.Command(GoTool(), "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, Module+"/store") {
		t.Fatalf("go list -deps %s gave %d packages, without %s/store", pkg, len(deps), Module)
	}
	for _, d := range deps {
		for _, bad := range append(PluginsOnly, more...) {
			if d == bad || strings.HasPrefix(d, bad+"/") {
				t.Errorf("%s links %s: run that driver in its plugin, behind the store bridge (cmd/internal/drivers)", pkg, d)
			}
		}
	}
}
