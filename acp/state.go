package acp

import (
	"context"
	"encoding/json"

	"github.com/lnk-dev/link/contract"
)

// StateKeeper is an Agent that keeps agent state: Serve answers
// _link/state/export and _link/state/import by calling it, and says so
// in initialize's _meta.link.state (docs/agent-state.md). For an agent
// that isn't one, both answer that it takes none, kind by kind.
type StateKeeper interface {
	// ExportState gives agent's conversations, those p names or all.
	ExportState(ctx context.Context, agent string, p contract.StateExportParams) (contract.StateDocument, error)
	// ImportState takes doc's conversations in, each under its old thread
	// when that is free, else a new one; one it refuses changes nothing.
	ImportState(ctx context.Context, agent string, doc contract.StateDocument) (contract.StateImportResult, error)
}

// NoStateReason is what an agent keeping no state answers for each kind.
const NoStateReason = "this harness keeps no agent state: it gives and takes none"

// NoStateExport is the export of an agent keeping no state.
func NoStateExport() contract.StateDocument {
	return contract.StateDocument{Version: contract.StateVersion, Conversations: []contract.StateConversation{}, Refused: map[string]string{contract.StateKindConversations: NoStateReason}}
}

// NoStateImport is the answer of an agent keeping no state to an import.
func NoStateImport() contract.StateImportResult {
	return contract.StateImportResult{Conversations: []contract.ImportedConversation{}, Refused: map[string]string{contract.StateKindConversations: NoStateReason}}
}

// state answers the agent state methods on a goroutine of their own, as
// recover: an export or import waits for turns to end.
func (s *server) state(ctx context.Context, r *Request) {
	if err := s.needInit(); err != nil {
		r.Fail(ctx, err)
		return
	}
	var run func() (any, error)
	keeper, ok := s.a.(StateKeeper)
	switch r.Method {
	case contract.MethodStateExport:
		p, err := contract.ParseStateExportParams(r.Params)
		if err != nil {
			r.Fail(ctx, err)
			return
		}
		run = func() (any, error) {
			if !ok {
				return NoStateExport(), nil
			}
			doc, err := keeper.ExportState(s.ctx, s.agent, p)
			if doc.Conversations == nil {
				doc.Conversations = []contract.StateConversation{}
			}
			return doc, err
		}
	default:
		doc, err := contract.ParseStateDocument(r.Params)
		if err != nil {
			r.Fail(ctx, err)
			return
		}
		run = func() (any, error) {
			if !ok {
				return NoStateImport(), nil
			}
			res, err := keeper.ImportState(s.ctx, s.agent, doc)
			if res.Conversations == nil {
				res.Conversations = []contract.ImportedConversation{}
			}
			return res, err
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res, err := run()
		if err != nil {
			r.Fail(ctx, err)
			return
		}
		r.Reply(ctx, res)
	}()
}

// ExportState sends _link/state/export with p.
func (c *Client) ExportState(ctx context.Context, p contract.StateExportParams) (contract.StateDocument, error) {
	var doc contract.StateDocument
	raw, err := c.conn.Call(ctx, contract.MethodStateExport, p)
	if err != nil {
		return doc, err
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return doc, err
	}
	return doc, nil
}

// ImportState sends _link/state/import of doc.
func (c *Client) ImportState(ctx context.Context, doc contract.StateDocument) (contract.StateImportResult, error) {
	var res contract.StateImportResult
	raw, err := c.conn.Call(ctx, contract.MethodStateImport, doc)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, err
	}
	return res, nil
}
