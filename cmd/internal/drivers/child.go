package drivers

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
)

// socketDir is the folder of the agent's store bridge sockets, beside
// its conversations, for its owner alone.
const socketDir = "run"

// maxSocketPath is the longest unix socket path every system takes
// (macOS's 104 bytes, with its terminating zero).
const maxSocketPath = 103

// child is a driver run in its plugin, lnk-<name>, a child process
// started at the first call, listening on a unix socket in the agent's
// folder; each call goes through the store bridge's client (bridge.Child),
// proved with the set's key.
type child struct {
	p      store.Paths
	driver string
	set    Set

	mu      sync.Mutex
	bridge  *bridge.Child
	tempDir string // a socket folder of its own, when the agent's path is too long for one
	closed  bool
}

var (
	_ store.Conversations = (*child)(nil)
	_ store.LatestReader  = (*child)(nil)
	_ store.Closer        = (*child)(nil)
)

func (s Set) plugin(p store.Paths, driver string) *child {
	return &child{p: p, driver: driver, set: s}
}

// get makes the child the first time a call needs it: finding the plugin
// then, so an agent that never keeps a conversation there needs none.
func (c *child) get() (*bridge.Child, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bridge != nil {
		return c.bridge, nil
	}
	if c.closed {
		return nil, fmt.Errorf("the %s driver of %s: closed", c.driver, c.p.Agent)
	}
	prog, err := FindPlugin(c.driver, c.set.Env)
	if err != nil {
		return nil, fmt.Errorf("run the %s driver of %s: %w", c.driver, c.p.Agent, err)
	}
	socket, err := c.socket()
	if err != nil {
		return nil, fmt.Errorf("run the %s driver of %s: %w", c.driver, c.p.Agent, err)
	}
	home := filepath.Dir(filepath.Dir(c.p.Root)) // Root is <home>/agents/<agent>
	args := []string{"serve", "--driver", c.driver, "--home", home, "--agent", c.p.Agent, "--key-file", "/dev/stdin", "--socket", socket}
	logger := c.set.Logger
	if logger != nil {
		logger = logger.With("agent", c.p.Agent, "driver", c.driver)
	}
	d, _ := Lookup(c.driver)
	b, err := bridge.NewChild(bridge.ChildConfig{Path: prog, Args: args, Env: PluginEnv(d, c.set.Env), Socket: socket, Key: c.set.Key, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("run the %s driver of %s: %w", c.driver, c.p.Agent, err)
	}
	c.bridge = b
	return b, nil
}

// socket makes the folder of the driver's socket and names it:
// <agent>/run/store-<driver>-<pid>.sock, the harness's pid, so two
// harnesses on one agent's store each have their child; or one in a new
// folder of the system's temporary one when that path is too long for a
// socket. Sockets left there by harnesses no longer running are removed.
func (c *child) socket() (string, error) {
	dir := filepath.Join(c.p.Root, socketDir)
	name := "store-" + c.driver + "-" + strconv.Itoa(os.Getpid()) + ".sock"
	if len(filepath.Join(dir, name)) > maxSocketPath {
		d, err := os.MkdirTemp("", "lnk-store-")
		if err != nil {
			return "", err
		}
		c.tempDir = d
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

func (c *child) Append(ctx context.Context, thread string, e store.Event) error {
	b, err := c.get()
	if err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	return b.Append(ctx, thread, e)
}

func (c *child) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	b, err := c.get()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	return b.Read(ctx, thread, from)
}

func (c *child) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	b, err := c.get()
	if err != nil {
		return nil, fmt.Errorf("latest %s: %w", thread, err)
	}
	return b.Latest(ctx, thread, n)
}

func (c *child) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	b, err := c.get()
	if err != nil {
		return store.Lease{}, fmt.Errorf("lease %s: %w", thread, err)
	}
	return b.Lease(ctx, thread, holder, ttl)
}

func (c *child) Release(ctx context.Context, thread, holder string) error {
	b, err := c.get()
	if err != nil {
		return fmt.Errorf("release %s: %w", thread, err)
	}
	return b.Release(ctx, thread, holder)
}

// Close stops the plugin, if one was started, and removes a socket
// folder of its own.
func (c *child) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var err error
	if c.bridge != nil {
		err = c.bridge.Close()
		c.bridge = nil
	}
	if c.tempDir != "" {
		if rerr := os.RemoveAll(c.tempDir); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		c.tempDir = ""
	}
	return err
}
