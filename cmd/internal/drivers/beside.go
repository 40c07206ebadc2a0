package drivers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
)

// BridgeSocket is the unix socket of the agent's store bridge for a
// driver, the one Link runs beside the agent (spec: "behind the agent's
// store bridge, which Link runs beside the agent"):
// <agent>/run/store-<driver>.sock. Its plugin listens there unless told
// another, and Link Harness reaches the driver there, so neither is told
// where the other is. A path too long for a socket (over 103 bytes, as
// macOS takes them) is refused, naming it.
func BridgeSocket(p store.Paths, driver string) (string, error) {
	path := filepath.Join(p.Root, socketDir, "store-"+driver+".sock")
	if len(path) > maxSocketPath {
		return "", fmt.Errorf("the %s store bridge's socket %s is longer than the %d bytes a socket takes: say another with the plugin's --socket, and give it to the harness (a blank unit's binding)", driver, path, maxSocketPath)
	}
	return path, nil
}

// makeSocketDir makes the folder of the agent's sockets, for its owner
// alone, narrowing one made before with a wider mode.
func makeSocketDir(p store.Paths) error {
	dir := filepath.Join(p.Root, socketDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// beside is the driver reached through the agent's store bridge beside
// it, at its BridgeSocket, proved with the set's key: never started by
// this program, dialed at the first call, and again after a dial that
// failed, whose error says how to run the bridge.
func (s Set) beside(p store.Paths, driver string) *bridged {
	b := &bridged{hint: fmt.Sprintf("run lnk-%s serve --home %s --agent %s --key-file <the agent's key file> beside it (docs/agents.md, \"The store bridge\"), or serve --store-child", driver, filepath.Dir(filepath.Dir(p.Root)), p.Agent)}
	socket, err := BridgeSocket(p, driver)
	if err != nil {
		b.err = err
		return b
	}
	b.cfg = bridge.Config{Network: "unix", Address: socket, Key: s.Key}
	b.what = fmt.Sprintf("the %s driver of %s: its store bridge at %s", driver, p.Agent, socket)
	return b
}

// Beside is an agent's store bridge run beside it by this program (lnk
// agent chat): lnk-<driver> serve on the agent's BridgeSocket, passed its
// driver's variables of the program's environment alone (PluginEnv),
// started again whenever it ends, until Close. Or one already running
// there (a service manager's), used as it is and left running.
type Beside struct {
	// Driver is the driver it runs, and Config how Link Harness reaches
	// it (Set.Bridges).
	Driver string
	Config bridge.Config
	child  *bridge.Child // nil: another's bridge, already running
}

// StartBeside runs the agent's store bridge for driver, one of Link's
// drivers of a plugin, proved with key: when one answers on its socket
// already with that key, that one; else its plugin, found as a child's is
// (FindPlugin), started now and kept running.
func StartBeside(ctx context.Context, p store.Paths, driver string, key []byte, env map[string]string, logger *slog.Logger) (*Beside, error) {
	d, ok := Lookup(driver)
	if !ok || d.Open != nil {
		return nil, fmt.Errorf("%q is no driver of a plugin's", driver)
	}
	socket, err := BridgeSocket(p, driver)
	if err != nil {
		return nil, err
	}
	b := &Beside{Driver: driver, Config: bridge.Config{Network: "unix", Address: socket, Key: key}}
	if c, err := bridge.Dial(ctx, b.Config); err == nil {
		c.Close()
		return b, nil
	} else if errors.Is(err, bridge.ErrRefused) {
		return nil, fmt.Errorf("the %s store bridge at %s holds another key than %s's", driver, socket, p.Agent)
	}
	prog, err := FindPlugin(driver, env)
	if err != nil {
		return nil, err
	}
	if err := makeSocketDir(p); err != nil {
		return nil, err
	}
	if logger != nil {
		logger = logger.With("agent", p.Agent, "driver", driver)
	}
	home := filepath.Dir(filepath.Dir(p.Root))
	args := []string{"serve", "--driver", driver, "--home", home, "--agent", p.Agent, "--key-file", "/dev/stdin", "--socket", socket}
	child, err := bridge.NewChild(bridge.ChildConfig{Path: prog, Args: args, Env: PluginEnv(d, env), Socket: socket, Key: key, Logger: logger})
	if err != nil {
		return nil, err
	}
	if err := child.Keep(ctx); err != nil {
		return nil, fmt.Errorf("start the %s store bridge of %s: %w", driver, p.Agent, err)
	}
	b.child = child
	return b, nil
}

// Pid is the bridge's process id; 0 for one this program didn't start.
func (b *Beside) Pid() int {
	if b.child == nil {
		return 0
	}
	return b.child.Pid()
}

// Close stops the bridge this program started; one it found running is
// left so.
func (b *Beside) Close() error {
	if b.child == nil {
		return nil
	}
	return b.child.Close()
}
