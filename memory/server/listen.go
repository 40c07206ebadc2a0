package server

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/lnk-dev/link/tools/mcpserve"
)

// Tool is Link Memory as tools/mcpserve names it in what it says.
var Tool = mcpserve.Tool{Name: "memory", Title: "Link Memory", Env: "LNK_MEMORY"}

// Running is a memory server listening on the loopback, at an address
// whose path carries a secret of its own.
type Running = mcpserve.Running

// Secret is the last element of the one path a memory server answers at
// (mcpserve.Secret).
type Secret = mcpserve.Secret

// NewSecret is a secret made now from crypto/rand.
func NewSecret() Secret { return mcpserve.NewSecret() }

// Start serves h (Handler's) at addr on this machine's loopback until
// Close, at /mcp/<secret> alone (mcpserve's Tool.Start): memory is the
// agent's alone, reached by its harness at $LNK_MEMORY.
func Start(ctx context.Context, h http.Handler, addr string, secret Secret) (*Running, error) {
	return Tool.Start(ctx, h, addr, secret)
}

// KeepSecret is the secret kept in the file at path (store.Paths'
// ToolSecret("memory")), made there on the first start or with renew
// (mcpserve's Tool.KeepSecret).
func KeepSecret(ctx context.Context, path string, renew bool, logger *slog.Logger) (Secret, error) {
	return Tool.KeepSecret(ctx, path, renew, logger)
}
