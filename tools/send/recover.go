package send

import (
	"context"
	"fmt"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
)

// maxRecover bounds the answer of one _link/recover: a page of the
// answers kept, at most a frame (contract.MaxFrame), as Link's bridge
// reads it.
const maxRecover = contract.MaxFrame

// maxPages bounds the pages Kept asks for: 64 pages of a frame each are a
// gigabyte of answers.
const maxPages = 64

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

// Kept is every answer kept at t, each with its id, left kept (two
// phases): a result that leaves answers out (its _meta.link.more) is
// followed by the next page, until one leaves none out or hands over one
// already had, the round of pages back at its start.
func Kept(ctx context.Context, t Target) ([]contract.RecoveredAnswer, error) {
	var out []contract.RecoveredAnswer
	had := map[string]bool{}
	for range maxPages {
		res, err := Recover(ctx, t, contract.RecoverParams{TwoPhase: true})
		if err != nil {
			return nil, err
		}
		again := false
		for _, k := range res.Answers {
			again = again || had[k.ID]
			if k.ID != "" && !had[k.ID] {
				out = append(out, k)
				had[k.ID] = true
			}
		}
		if !res.More() || again || len(res.Answers) == 0 {
			break
		}
	}
	return out, nil
}
