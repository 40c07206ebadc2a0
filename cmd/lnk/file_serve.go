package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/tools/file"
	"github.com/lnk-dev/link/tools/mcpserve"
)

// fileTool is the file tool as mcpserve names it.
var fileTool = mcpserve.Tool{Name: "file", Title: "Link's file tool", Env: "LNK_FILE"}

func (m *Main) fileServeCmd() *cobra.Command {
	var cf chatFlags
	var laddr string
	var newSecret bool
	c := &cobra.Command{
		Use:   "serve",
		Short: "run the file tool for the agent: an MCP server reading, writing and finding its workspace's files",
		Long:  fileServeLong,
		Example: `  lnk file serve
  lnk file serve --agent research --listen 127.0.0.1:18901
  lnk file serve --new-secret`,
		Args: noWords,
		RunE: func(c *cobra.Command, _ []string) error {
			return fileServe(c.Context(), cf, laddr, newSecret, m.Stdout, m.Stderr)
		},
	}
	cf.registerAgent(c.Flags())
	c.Flags().StringVar(&laddr, "listen", "127.0.0.1:0", "the loopback `address` to answer on; port 0 takes a free one")
	c.Flags().BoolVar(&newSecret, "new-secret", false, "make a new secret for the address, so the one $LNK_FILE holds now is answered no more")
	return c
}

const fileServeLong = `Runs the file tool for the agent, an MCP server over Streamable HTTP on the
loopback: read (a file's lines), write (a whole file, all at once), replace (one
exact text found once) and find (names by glob, lines by a regular expression,
.gitignore-aware), each in the agent's workspace, its files/ folder, and nowhere
else: every path is resolved by the kernel beneath it (openat2 on Linux), and
each call runs on a thread of its own held by Landlock to it.
Link Harness reaches it at $LNK_FILE; lnk agent chat starts one itself.
Once listening it prints its address, the value for $LNK_FILE, on a line of its
own, and serves until interrupted. The address's path holds a secret kept in the
agent's file/secret (0600), as lnk memory serve's: --new-secret makes a new one.
On Linux the process then holds itself by Landlock to the workspace: no other
file of the machine is opened, no network connection made (said on stderr when
the kernel has no Landlock).`

// fileServe serves the file tool until ctx ends, its process confined to
// the workspace.
func fileServe(ctx context.Context, cf chatFlags, laddr string, newSecret bool, stdout, stderr io.Writer) error {
	p, err := cf.paths()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	run, err := startFile(ctx, p, laddr, newSecret, logger)
	if err != nil {
		return err
	}
	abi, err := file.Confine(p.Files())
	switch {
	case err != nil:
		run.Close()
		return fmt.Errorf("file: confine the process to the workspace: %w", err)
	case abi == 0:
		fmt.Fprintln(stderr, "lnk file serve: this kernel has no Landlock: the process is not confined to the workspace (each call still is, by its lookup)")
	}
	fmt.Fprintln(stdout, run.URL())
	<-ctx.Done()
	return run.Close()
}

// fileServer is the file tool served for one agent, and its workspace.
type fileServer struct {
	*mcpserve.Running
	w *file.Workspace
}

// Close stops serving, then lets the workspace's sandbox go.
func (s *fileServer) Close() error {
	err := s.Running.Close()
	s.w.Close()
	return err
}

// startFile serves the file tool of the agent at p on laddr, its
// workspace made when missing, at the secret the agent's file/secret
// keeps (a new one with newSecret).
func startFile(ctx context.Context, p store.Paths, laddr string, newSecret bool, logger *slog.Logger) (*fileServer, error) {
	if err := os.MkdirAll(p.Files(), 0o700); err != nil {
		return nil, fmt.Errorf("file: the workspace: %w", err)
	}
	secret, err := fileTool.KeepSecret(ctx, p.ToolSecret(fileTool.Name), newSecret, logger)
	if err != nil {
		return nil, err
	}
	w, err := file.New(p.Files())
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	run, err := fileTool.Start(ctx, file.Handler(w, file.Options{Logger: logger}), laddr, secret)
	if err != nil {
		w.Close()
		return nil, err
	}
	return &fileServer{Running: run, w: w}, nil
}
