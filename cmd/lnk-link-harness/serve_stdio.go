package main

import (
	"context"
	"crypto/rand"
	"log/slog"

	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// runStdio serves the one agent over standard input and output until the
// input ends or ctx does: nothing but ACP is written to Stdout, the log
// goes to Stderr.
func (m *Main) runStdio(ctx context.Context) error {
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	p, err := store.For(m.Home, m.Agent)
	if err != nil {
		return err
	}
	key, err := m.stdioKey(p, logger)
	if err != nil {
		return err
	}
	if m.AgentID == "" {
		if m.AgentID, err = serve.ReadAgentID(p); err != nil {
			return err
		}
	}
	close(m.ready)
	return serve.ServeStdio(ctx, serve.Config{
		Home:       m.Home,
		Agent:      m.Agent,
		AgentID:    m.AgentID,
		Key:        key,
		Model:      m.Model,
		Env:        m.Env,
		Logger:     logger,
		StoreChild: m.StoreChild,
	}, m.Stdin, m.Stdout)
}

// stdioKey is the key serve --stdio proves calls to the agent's store
// bridge with, its only use there: the key file's, else the agent's own
// endpoint.key when it has one (the key lnk agent chat starts its bridge
// with), else a key of its own, for --store-child's children.
func (m *Main) stdioKey(p store.Paths, logger *slog.Logger) ([]byte, error) {
	if m.KeyFile != "" {
		return serve.ReadKey(m.KeyFile, logger)
	}
	if k, err := contract.ReadKeyFile(p.KeyFile()); err == nil {
		return k, nil
	}
	key := make([]byte, 32)
	rand.Read(key)
	return key, nil
}
