package drivers

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// EnvStoreCommand names the program a driver's plugin is run as, in place
// of lnk-<name>: a path, or a name in $PATH. It is given the plugin's
// arguments, the driver's name among them (--driver NAME).
const EnvStoreCommand = "LNK_STORE_COMMAND"

// FindPlugin finds the program of the named driver's plugin:
// $LNK_STORE_COMMAND when env sets it, else lnk-<name> beside the running
// program, else in $PATH, else, for a program built from a checkout of
// Link's source (go run ./cmd/lnk), lnk-<name> built from that same
// source into the user's cache folder (FromSource). Its error names each
// place it looked.
func FindPlugin(name string, env map[string]string) (string, error) {
	if c := env[EnvStoreCommand]; c != "" {
		p, err := exec.LookPath(c)
		if err != nil {
			return "", fmt.Errorf("find $%s %s: %w", EnvStoreCommand, c, err)
		}
		return p, nil
	}
	prog := "lnk-" + name
	var looked []string
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), prog)
		if isProgram(beside) {
			return beside, nil
		}
		looked = append(looked, beside)
	}
	if p, err := exec.LookPath(prog); err == nil {
		return p, nil
	}
	looked = append(looked, prog+" in $PATH")
	p, err := FromSource(name)
	if err == nil {
		return p, nil
	}
	return "", fmt.Errorf("find %s, the %s driver's plugin: $%s is not set, and no program at %s (%v)", prog, name, EnvStoreCommand, strings.Join(looked, " nor "), err)
}

// isProgram says whether path is a file that can be run.
func isProgram(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

// errNotFromSource: the running program wasn't built from a checkout of
// Link's source, so there is no source to build a plugin from.
var errNotFromSource = errors.New("not built from a checkout of Link's source")

// built are the plugins FromSource built in this process, by name.
var built struct {
	sync.Mutex
	paths map[string]string
}

// FromSource builds the named driver's plugin from the source the running
// program was built from: for go run ./cmd/lnk in a checkout, which has
// no plugin beside it. The program is lnk-<name> in the user's cache
// folder (lnk/plugins/<hash of the checkout's path>/), built with the go
// command in $PATH once per process, its packages from go's build cache. A
// program built from a module download (go install ...@version) or with
// -trimpath names no checkout, and gets errNotFromSource.
func FromSource(name string) (string, error) {
	root, err := sourceRoot()
	if err != nil {
		return "", err
	}
	built.Lock()
	defer built.Unlock()
	if p := built.paths[name]; p != "" {
		return p, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("build lnk-%s from %s: %w", name, root, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("build lnk-%s from %s: %w", name, root, err)
	}
	h := fnv.New64a()
	h.Write([]byte(root))
	dir := filepath.Join(cache, "lnk", "plugins", strconv.FormatUint(h.Sum64(), 16))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("build lnk-%s from %s: %w", name, root, err)
	}
	// Built beside its place and renamed into it, so another lnk starting
	// it meanwhile runs the old program or the new, never half of one.
	out := filepath.Join(dir, "lnk-"+name)
	tmp := out + "." + strconv.Itoa(os.Getpid())
	cmd := exec.Command(goTool, "build", "-o", tmp, "./cmd/lnk-"+name)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build lnk-%s from %s: %w: %s", name, root, err, strings.TrimSpace(string(b)))
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build lnk-%s from %s: %w", name, root, err)
	}
	if built.paths == nil {
		built.paths = map[string]string{}
	}
	built.paths[name] = out
	return out, nil
}

// sourceRoot is the folder of the checkout the running program was built
// from: the module root this file's path, as the compiler recorded it,
// lies in.
func sourceRoot() (string, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Sum != "" {
		return "", errNotFromSource
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", errNotFromSource
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file)))) // <root>/cmd/internal/drivers/find.go
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", errNotFromSource
	}
	return root, nil
}
