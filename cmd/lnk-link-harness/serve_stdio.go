package main

import (
	"context"
	"crypto/rand"
	"log/slog"

	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/store"
)

// runStdio serves the one agent over standard input and output until the
// input ends or ctx does: nothing but ACP is written to Stdout, the log
// goes to Stderr. Without a key file, a key of its own proves the store's
// children (the only use of the key here).
func (m *Main) runStdio(ctx context.Context) error {
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var key []byte
	if m.KeyFile != "" {
		k, err := serve.ReadKey(m.KeyFile, logger)
		if err != nil {
			return err
		}
		key = k
	} else {
		key = make([]byte, 32)
		rand.Read(key)
	}
	if m.AgentID == "" {
		p, err := store.For(m.Home, m.Agent)
		if err != nil {
			return err
		}
		if m.AgentID, err = serve.ReadAgentID(p); err != nil {
			return err
		}
	}
	close(m.ready)
	return serve.ServeStdio(ctx, serve.Config{
		Home:    m.Home,
		Agent:   m.Agent,
		AgentID: m.AgentID,
		Key:     key,
		Model:   m.Model,
		Env:     m.Env,
		Logger:  logger,
	}, m.Stdin, m.Stdout)
}
