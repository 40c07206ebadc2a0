package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
)

// The environment a child driver is started by.
const (
	// EnvStoreCommand names the program that runs a driver behind the
	// store bridge (lnk, whose store serve does); else lnk beside the
	// running program, else lnk in $PATH.
	EnvStoreCommand = "LNK_STORE_COMMAND"
	// EnvGCSBucket, EnvGCSEndpoint and EnvGCSPrefix are gcs's --gcs-bucket,
	// --gcs-endpoint and --gcs-prefix.
	EnvGCSBucket   = "LNK_GCS_BUCKET"
	EnvGCSEndpoint = "LNK_GCS_ENDPOINT"
	EnvGCSPrefix   = "LNK_GCS_PREFIX"
)

// socketDir is the folder of the agent's store bridge sockets, beside
// its conversations, for its owner alone.
const socketDir = "run"

// maxSocketPath is the longest unix socket path every system takes
// (macOS's 104 bytes, with its terminating zero).
const maxSocketPath = 103

// sandbox is a driver the harness doesn't link: lnk store serve runs it
// in a child process, started at the first call, on a unix socket in the
// agent's folder, and each call goes through the store bridge's client
// (bridge.Child), proved with the agent's key.
type sandbox struct {
	p      store.Paths
	driver string
	ways   Ways

	mu      sync.Mutex
	child   *bridge.Child
	tempDir string // a socket folder of its own, when the agent's path is too long for one
	closed  bool
}

var (
	_ store.Conversations = (*sandbox)(nil)
	_ store.LatestReader  = (*sandbox)(nil)
	_ store.Closer        = (*sandbox)(nil)
)

func newSandbox(p store.Paths, driver string, w Ways) *sandbox {
	return &sandbox{p: p, driver: driver, ways: w}
}

// get makes the child the first time a call needs it: finding lnk then,
// so an agent that never keeps a conversation there needs none.
func (s *sandbox) get() (*bridge.Child, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.child != nil {
		return s.child, nil
	}
	if s.closed {
		return nil, fmt.Errorf("the %s driver of %s: closed", s.driver, s.p.Agent)
	}
	cmd, err := FindStoreCommand(s.ways.Env)
	if err != nil {
		return nil, fmt.Errorf("run the %s driver of %s: %w", s.driver, s.p.Agent, err)
	}
	socket, err := s.socket()
	if err != nil {
		return nil, fmt.Errorf("run the %s driver of %s: %w", s.driver, s.p.Agent, err)
	}
	home := filepath.Dir(filepath.Dir(s.p.Root)) // Root is <home>/agents/<agent>
	args := []string{"store", "serve", "--home", home, "--agent", s.p.Agent, "--driver", s.driver, "--key-file", "/dev/stdin", "--socket", socket}
	if s.driver == "gcs" {
		for _, f := range [][2]string{{"--gcs-bucket", EnvGCSBucket}, {"--gcs-endpoint", EnvGCSEndpoint}, {"--gcs-prefix", EnvGCSPrefix}} {
			if v := s.ways.Env[f[1]]; v != "" {
				args = append(args, f[0], v)
			}
		}
	}
	logger := s.ways.Logger
	if logger != nil {
		logger = logger.With("agent", s.p.Agent, "driver", s.driver)
	}
	c, err := bridge.NewChild(bridge.ChildConfig{Path: cmd, Args: args, Socket: socket, Key: s.ways.Key, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("run the %s driver of %s: %w", s.driver, s.p.Agent, err)
	}
	s.child = c
	return c, nil
}

// socket makes the folder of the driver's socket and names it:
// <agent>/run/store-<driver>-<pid>.sock, the harness's pid, so two
// harnesses on one agent's store each have their child; or one in a new
// folder of the system's temporary one when that path is too long for a
// socket. Sockets left there by harnesses no longer running are removed.
func (s *sandbox) socket() (string, error) {
	dir := filepath.Join(s.p.Root, socketDir)
	name := "store-" + s.driver + "-" + strconv.Itoa(os.Getpid()) + ".sock"
	if len(filepath.Join(dir, name)) > maxSocketPath {
		d, err := os.MkdirTemp("", "lnk-store-")
		if err != nil {
			return "", err
		}
		s.tempDir = d
		return filepath.Join(d, name), nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	// A folder made before with a wider mode is narrowed.
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", err
	}
	removeLeftSockets(dir)
	return filepath.Join(dir, name), nil
}

// removeLeftSockets removes the sockets in dir whose harness no longer
// runs (its pid in the name), left by one killed with its child.
func removeLeftSockets(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "store-")
		if !ok || !strings.HasSuffix(rest, ".sock") || e.Type()&fs.ModeSocket == 0 {
			continue
		}
		i := strings.LastIndexByte(rest, '-')
		pid, err := strconv.Atoi(strings.TrimSuffix(rest[i+1:], ".sock"))
		if i < 0 || err != nil || pid == os.Getpid() || running(pid) {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}

// FindStoreCommand finds the program that runs a driver behind the store
// bridge: $LNK_STORE_COMMAND (a path, or a name in $PATH) when env sets
// it, else lnk beside the running program, else lnk in $PATH. Its error
// names each place it looked.
func FindStoreCommand(env map[string]string) (string, error) {
	if c := env[EnvStoreCommand]; c != "" {
		p, err := exec.LookPath(c)
		if err != nil {
			return "", fmt.Errorf("find $%s %s: %w", EnvStoreCommand, c, err)
		}
		return p, nil
	}
	var looked []string
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), "lnk")
		if isProgram(beside) {
			return beside, nil
		}
		looked = append(looked, beside)
	}
	p, err := exec.LookPath("lnk")
	if err == nil {
		return p, nil
	}
	looked = append(looked, "lnk in $PATH")
	return "", fmt.Errorf("find lnk, which runs the driver (lnk store serve): $%s is not set, and no program at %s", EnvStoreCommand, strings.Join(looked, " nor "))
}

// isProgram says whether path is a file that can be run.
func isProgram(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

func (s *sandbox) Append(ctx context.Context, thread string, e store.Event) error {
	c, err := s.get()
	if err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	return c.Append(ctx, thread, e)
}

func (s *sandbox) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	c, err := s.get()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	return c.Read(ctx, thread, from)
}

func (s *sandbox) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	c, err := s.get()
	if err != nil {
		return nil, fmt.Errorf("latest %s: %w", thread, err)
	}
	return c.Latest(ctx, thread, n)
}

func (s *sandbox) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	c, err := s.get()
	if err != nil {
		return store.Lease{}, fmt.Errorf("lease %s: %w", thread, err)
	}
	return c.Lease(ctx, thread, holder, ttl)
}

func (s *sandbox) Release(ctx context.Context, thread, holder string) error {
	c, err := s.get()
	if err != nil {
		return fmt.Errorf("release %s: %w", thread, err)
	}
	return c.Release(ctx, thread, holder)
}

// Pid is the running child's process id, 0 when none runs.
func (s *sandbox) Pid() int {
	s.mu.Lock()
	c := s.child
	s.mu.Unlock()
	if c == nil {
		return 0
	}
	return c.Pid()
}

// Close stops the child, if one was started, and removes a socket folder
// of its own.
func (s *sandbox) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var err error
	if s.child != nil {
		err = s.child.Close()
		s.child = nil
	}
	if s.tempDir != "" {
		if rerr := os.RemoveAll(s.tempDir); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		s.tempDir = ""
	}
	return err
}
