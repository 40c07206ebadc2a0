// Package driverstest builds the drivers' plugins for tests that keep
// conversations in them, as they are installed: lnk-<name> in one folder.
package driverstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/lnk-dev/link/cmd/internal/drivers"
	"github.com/lnk-dev/link/store/driver"
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

// Registered fails t unless the driver a plugin serves registered itself
// (store/driver) by the name Link's programs run its plugin under
// (drivers.Link): the two places a plugin's name is written, its driver's
// package and the table of the programs that can't link it.
func Registered(t testing.TB, name string) {
	t.Helper()
	if _, ok := driver.Lookup(name); !ok {
		t.Errorf("no driver registered %q", name)
	}
	if d, ok := drivers.Lookup(name); !ok || d.Open != nil {
		t.Errorf("drivers.Link has %q as %+v, %v; want a plugin's", name, d, ok)
	}
}
