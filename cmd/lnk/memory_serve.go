package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	lnkmemory "github.com/lnk-dev/link/memory"
	"github.com/lnk-dev/link/memory/fts"
	"github.com/lnk-dev/link/memory/server"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

func (m *Main) memoryServeCmd() *cobra.Command {
	var cf chatFlags
	var laddr string
	var newSecret bool
	c := &cobra.Command{
		Use:   "serve",
		Short: "run Link Memory for the agent: an MCP server of its notes, search, files and skills",
		Long:  memoryServeLong,
		Example: `  lnk memory serve
  lnk memory serve --agent research --listen 127.0.0.1:18900
  lnk memory serve --new-secret`,
		Args: noWords,
		RunE: func(c *cobra.Command, _ []string) error {
			return memoryServe(c.Context(), cf, laddr, newSecret, m.Env, m.Stdout, m.Stderr)
		},
	}
	cf.register(c.Flags())
	c.Flags().StringVar(&laddr, "listen", "127.0.0.1:0", "the loopback `address` to answer on; port 0 takes a free one")
	c.Flags().BoolVar(&newSecret, "new-secret", false, "make a new secret for the address, so the one $LNK_MEMORY holds now is answered no more")
	return c
}

const memoryServeLong = `Runs Link Memory for the agent, an MCP server over Streamable HTTP on the
loopback: remember and forget (its notes, memory/notes.md), search (ranked, over
every conversation's copy, its notes, files and skills), read, list and links.
Link Harness reaches it at $LNK_MEMORY; lnk agent chat starts one itself.
Once listening it prints its address, the value for $LNK_MEMORY, on a line of its
own, and serves until interrupted. The address's path holds a secret: memory
answers a request at that address alone (404 elsewhere), so no other local user
reaches it by its port. Give it to the agent's harness only. The secret is kept in
the agent's memory/secret (0600), made on the first start, so with a fixed --listen
port the address stays the same across restarts; --new-secret makes a new one (and
the old address is answered no more). A secret file readable by other users, or
holding no secret, is made anew, said on stderr.

Search ranks by full text (BM25, SQLite FTS5); when $OLLAMA_HOST names a runtime
on this machine with the embedding model $LNK_MEMORY_EMBED_MODEL (default
nomic-embed-text), by both (hybrid). Nothing is sent anywhere else.`

// EnvEmbedModel names the embedding model memory asks a local Ollama for.
const envEmbedModel = "LNK_MEMORY_EMBED_MODEL"

// defaultEmbedModel is the embedding model asked for when none is named.
const defaultEmbedModel = "nomic-embed-text"

// memoryServe serves Link Memory until ctx ends.
func memoryServe(ctx context.Context, cf chatFlags, laddr string, newSecret bool, env map[string]string, stdout, stderr io.Writer) error {
	p, err := cf.paths()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ms, err := startMemory(ctx, cf, p, env, laddr, newSecret, logger)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, ms.URL())
	<-ctx.Done()
	return ms.Close()
}

// memoryServer is Link Memory served for one agent, and what it opened.
type memoryServer struct {
	*server.Running
	m        *lnkmemory.Memory
	closeAll func()
}

// Close stops serving and closes the index and the drivers.
func (s *memoryServer) Close() error {
	err := s.Running.Close()
	err = errors.Join(err, s.m.Close())
	s.closeAll()
	return err
}

// startMemory serves the memory of the agent at p on laddr: its index in
// its memory folder, its conversations read through every driver lnk
// has, embeddings from a local Ollama when env names one; at the secret
// the agent's memory/secret keeps (a new one with newSecret).
func startMemory(ctx context.Context, cf chatFlags, p store.Paths, env map[string]string, laddr string, newSecret bool, logger *slog.Logger) (*memoryServer, error) {
	if err := os.MkdirAll(filepath.Join(p.Root, "memory"), 0o700); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	secret, err := server.KeepSecret(ctx, p.ToolSecret("memory"), newSecret, logger)
	if err != nil {
		return nil, err
	}
	r, closeAll, err := cf.routerWith(env, p, log.Name)
	if err != nil {
		return nil, err
	}
	idx, err := fts.Open(ctx, filepath.Join(p.Root, "memory", "index.sqlite"))
	if err != nil {
		closeAll()
		return nil, err
	}
	cfg := lnkmemory.Config{Paths: p, Index: idx, Conversations: r, Logger: logger}
	cfg.Embedder, cfg.EmbedNote = embedder(ctx, env)
	m, err := lnkmemory.New(cfg)
	if err != nil {
		idx.Close()
		closeAll()
		return nil, err
	}
	run, err := server.Start(ctx, server.Handler(m, server.Options{Logger: logger}), laddr, secret)
	if err != nil {
		m.Close()
		closeAll()
		return nil, err
	}
	return &memoryServer{Running: run, m: m, closeAll: closeAll}, nil
}

// embedder is the local embedding model env names, checked once, or why
// there is none.
func embedder(ctx context.Context, env map[string]string) (lnkmemory.Embedder, string) {
	host := env[model.EnvOllamaHost]
	if host == "" {
		return nil, "no $" + model.EnvOllamaHost + " names a local embedding runtime"
	}
	name := firstOf(env[envEmbedModel], defaultEmbedModel)
	o, err := lnkmemory.NewOllama(host, name)
	if err != nil {
		return nil, err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := o.Check(ctx); err != nil {
		return nil, fmt.Sprintf("the embedding model %s at $%s didn't answer (%v)", name, model.EnvOllamaHost, err)
	}
	return o, ""
}
