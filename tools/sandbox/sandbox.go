// Package sandbox is the kernel confinement every program an agent's
// tools run goes through (run__command, run__start): each call a process
// of its own in new user, mount, pid, IPC and UTS namespaces (and a
// network namespace of its own, with no way out, unless the agent's
// config.json allows the network), confined by Landlock to its workspace
// (read-write) and the system (read-only), under limits on its
// processes, memory, CPU time, file size and open files, with an
// environment made for it alone.
//
// The confinement is the kernel's, never checks in Go: Command starts
// this program again (the trampoline, Main), which, inside the new
// namespaces, mounts a /proc of its own and empty /tmp and /run, sets the
// limits, restricts itself with Landlock, drops every capability, and
// only then starts the command as its child, reaping whatever the
// command leaves and ending with it; the pid namespace ends every
// process of the call when it does. Where the kernel offers no sandbox
// (no Landlock, no user namespaces) Command refuses, saying why and how
// to run unconfined (Spec.Unconfined, set only from the agent's
// config.json), never running a command unconfined on its own.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Spec is one command to run in a sandbox: what Command starts. It is
// JSON as it is (runbg's background commands keep it on disk).
type Spec struct {
	// Args is the program and its arguments; Args[0] without a slash is
	// looked up in Env's PATH, inside the sandbox.
	Args []string `json:"args"`
	// Dir is the workspace, an absolute path: the one folder the command
	// may write, and its working folder.
	Dir string `json:"dir"`
	// Env is the command's whole environment, "NAME=value" (Env makes it).
	Env []string `json:"env"`
	// Network lets the command reach the network (the agent's config.json
	// allows it); without, it has a network namespace of its own with no
	// interface up and Landlock refuses every TCP bind and connect.
	Network bool `json:"network,omitempty"`
	// Read are more folders or files the command may read (and run),
	// absolute paths, beside the system's.
	Read []string `json:"read,omitempty"`
	// Limits bound what the command may take.
	Limits Limits `json:"limits"`
	// Unconfined runs the command without namespaces or Landlock (the
	// limits and the environment still hold): only when the agent's
	// config.json says so, for a kernel that offers no sandbox.
	Unconfined bool `json:"unconfined,omitempty"`
}

// Stored is the command of a spec kept as JSON, as Command makes it,
// without asking the kernel again whether it confines (AssumeAvailable):
// what a background command's supervisor runs, a process started by a
// run server that asked before it kept the spec.
func Stored(spec []byte) (*exec.Cmd, error) {
	var s Spec
	if err := json.Unmarshal(spec, &s); err != nil {
		return nil, fmt.Errorf("the command's spec doesn't read: %w", err)
	}
	AssumeAvailable()
	return Command(s)
}

// Limits bound a sandboxed command, each as a resource limit
// (setrlimit) of every process in it; zero is the default.
type Limits struct {
	Processes  int   `json:"processes,omitempty"`   // processes (and threads) at once: RLIMIT_NPROC
	Memory     int64 `json:"memory,omitempty"`      // bytes of address space each: RLIMIT_AS
	CPUSeconds int   `json:"cpu_seconds,omitempty"` // CPU seconds each: RLIMIT_CPU
	FileSize   int64 `json:"file_size,omitempty"`   // bytes of the largest file written: RLIMIT_FSIZE
	OpenFiles  int   `json:"open_files,omitempty"`  // descriptors each: RLIMIT_NOFILE
}

// DefaultLimits are the limits of a command whose Spec says none.
var DefaultLimits = Limits{
	Processes:  256,
	Memory:     8 << 30,
	CPUSeconds: 600,
	FileSize:   1 << 30,
	OpenFiles:  1024,
}

// WithDefaults is l with each zero taken from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	pick := func(v, d int64) int64 {
		if v > 0 {
			return v
		}
		return d
	}
	return Limits{
		Processes:  int(pick(int64(l.Processes), int64(DefaultLimits.Processes))),
		Memory:     pick(l.Memory, DefaultLimits.Memory),
		CPUSeconds: int(pick(int64(l.CPUSeconds), int64(DefaultLimits.CPUSeconds))),
		FileSize:   pick(l.FileSize, DefaultLimits.FileSize),
		OpenFiles:  int(pick(int64(l.OpenFiles), int64(DefaultLimits.OpenFiles))),
	}
}

// ErrUnavailable is why a command can't be confined on this machine: the
// kernel offers no Landlock, or no user namespaces. Its message says how
// to run commands unconfined, which only the agent's config.json may ask.
var ErrUnavailable = errors.New(`the kernel offers no sandbox here; to run commands unconfined anyway, set "run": {"sandbox": "off"} in the agent's config.json (README, "Running commands")`)

// DefaultPath is the PATH a command is given when the agent's config.json
// names none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Env is a command's whole environment: PATH, HOME (the workspace),
// LANG, TERM, TMPDIR, and add (the agent's config.json's "run": {"env"}) over
// them, sorted. Nothing of the process that runs it (model keys, the
// LNK_ addresses with their secrets) is in it unless add says so.
func Env(workspace string, add map[string]string) []string {
	env := map[string]string{
		"PATH":   DefaultPath,
		"HOME":   workspace,
		"LANG":   "C.UTF-8",
		"TERM":   "dumb",
		"TMPDIR": "/tmp",
	}
	maps.Copy(env, add)
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// check refuses a spec Command can't start, naming the rule.
func (s Spec) check() error {
	if len(s.Args) == 0 || s.Args[0] == "" {
		return errors.New("sandbox: no program to run")
	}
	if !filepath.IsAbs(s.Dir) {
		return fmt.Errorf("sandbox: the workspace %q is not an absolute path", s.Dir)
	}
	for _, p := range s.Read {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("sandbox: a folder to read, %q, is not an absolute path", p)
		}
	}
	for _, v := range slices.Concat(s.Args, s.Env, s.Read, []string{s.Dir}) {
		if strings.ContainsRune(v, 0) {
			return errors.New("sandbox: an argument, a path or the environment holds a NUL byte, which no program can be given")
		}
	}
	for _, e := range s.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return fmt.Errorf("sandbox: the environment's %q is not NAME=value", e)
		}
	}
	return nil
}
