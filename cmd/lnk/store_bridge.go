package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"

	"github.com/lnk-dev/link/cmd/internal/drivers"
	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/bridge"
)

// startStore runs the agent's store bridge beside the harness lnk agent
// chat starts, when the agent's storage ([storage] conversations) names a
// driver of a plugin's (sqlite, gcs): lnk-<driver> serve on the agent's
// socket, proved with its key, passed the driver's settings and
// variables of lnk's environment alone; or the one already running there
// (a service manager's). nil when the storage is the log or compact, or
// config.json can't be read: each turn says why, as without a bridge.
func startStore(ctx context.Context, p store.Paths, key []byte, env map[string]string, logger *slog.Logger) (*drivers.Beside, error) {
	set, err := serve.ReadSettings(ctx, p, "")
	if err != nil {
		return nil, nil
	}
	d, ok := drivers.Lookup(set.Conversations)
	if !ok || d.Open != nil {
		return nil, nil
	}
	b, err := drivers.StartBeside(ctx, p, d.Name, key, env, logger)
	if err != nil {
		return nil, fmt.Errorf("the store bridge of %s: %w", p.Agent, err)
	}
	return b, nil
}

// storeBridges is the bridge started as Link Harness reaches it (none
// for nil).
func storeBridges(b *drivers.Beside) map[string]bridge.Config {
	if b == nil {
		return nil
	}
	return map[string]bridge.Config{b.Driver: b.Config}
}

// sayStore says on status where the agent's store bridge answers.
func sayStore(status io.Writer, b *drivers.Beside) {
	if b == nil {
		return
	}
	if pid := b.Pid(); pid != 0 {
		fmt.Fprintf(status, "lnk: its %s store bridge (lnk-%s serve, pid %d) answers on unix:%s\n", b.Driver, b.Driver, pid, b.Config.Address)
		return
	}
	fmt.Fprintf(status, "lnk: its %s store bridge already answers on unix:%s\n", b.Driver, b.Config.Address)
}

// closeStore stops the store bridge started, if any.
func closeStore(b *drivers.Beside) error {
	if b == nil {
		return nil
	}
	return b.Close()
}

// bridgesStatus asks each store bridge the agent's conversations need (a
// driver of a plugin's its storage names, or one keeping any now) for a
// ping proved with the key in keyFile, each within toolBound.
func bridgesStatus(ctx context.Context, p store.Paths, s storageStatus, keyFile string) []bridgeStatus {
	var names []string
	for _, name := range append([]string{s.New}, slices.Sorted(maps.Keys(s.ByKind))...) {
		if d, ok := drivers.Lookup(name); ok && d.Open == nil && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	key, kerr := contract.ReadKeyFile(keyFile)
	var out []bridgeStatus
	for _, name := range names {
		b := bridgeStatus{Driver: name}
		socket, err := drivers.BridgeSocket(p, name)
		b.Socket = socket
		if err == nil && kerr != nil {
			err = fmt.Errorf("no key to prove a call: %w", kerr)
		}
		if err == nil {
			dctx, cancel := context.WithTimeout(ctx, toolBound)
			var c *bridge.Client
			if c, err = bridge.Dial(dctx, bridge.Config{Network: "unix", Address: socket, Key: key}); err == nil {
				c.Close()
				b.Answers = true
			}
			cancel()
		}
		if err != nil {
			b.Error = err.Error()
		}
		out = append(out, b)
	}
	return out
}
