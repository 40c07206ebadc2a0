package send

import (
	"context"
	"fmt"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
)

// maxRecover bounds the answer of one _link/recover: every answer kept,
// each up to what a bridge reads of one.
const maxRecover = 64 << 20

// Recover asks the agent at t for _link/recover with p, on a connection
// opened as a message's is (the proof first, then the key): the answers
// kept because nobody took them, in two phases when p says so, or done
// to let those with its ids go.
func Recover(ctx context.Context, t Target, p contract.RecoverParams) (contract.RecoverResult, error) {
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: t.URL, Key: t.Key, Agent: t.Agent, AgentID: t.AgentID, ReadLimit: maxRecover})
	if err != nil {
		return contract.RecoverResult{}, fmt.Errorf("recover: %w", err)
	}
	c := acp.NewClient(ctx, conn, nil)
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return contract.RecoverResult{}, fmt.Errorf("recover: %w", err)
	}
	res, err := c.Recover(ctx, p)
	if err != nil {
		return res, fmt.Errorf("recover: %w", err)
	}
	return res, nil
}
