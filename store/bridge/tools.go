package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// The tools calls carry a conversation's tools to the served driver when
// it keeps them with the conversation (store.ToolsKeeper), off the
// machine the harness runs on; a driver that doesn't is answered
// tools_unsupported (tools_not_kept to a first wire's client: wire.go),
// and the client's caller keeps them in the folder.

var (
	_ store.ToolsKeeper = (*Client)(nil)
	_ store.ToolsKeeper = (*Child)(nil)
)

// toolsAnswer is the answer of both tools calls: null for every tool,
// else the list.
type toolsAnswer struct {
	Tools *[]string `json:"tools"`
}

// decodeTools reads a narrow call's body: one JSON list of tools' names,
// as the contract allows a list.
func decodeTools(body []byte) ([]string, error) {
	var tools []string
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&tools); err != nil {
		return nil, fmt.Errorf("a narrow's body is a list of tools' names: %v", err)
	}
	if dec.More() {
		return nil, errors.New("a narrow's body is one list")
	}
	if tools == nil {
		return nil, errors.New("a narrow's body is a list, not null")
	}
	if err := store.CheckTools(tools); err != nil {
		return nil, err
	}
	return tools, nil
}

// tools answers a tools or narrow call with the served driver's
// ToolsKeeper, or store.ErrToolsUnsupported when it has none.
func (s *Server) tools(ctx context.Context, w http.ResponseWriter, c call) error {
	tk, ok := s.store.(store.ToolsKeeper)
	if !ok {
		return fmt.Errorf("tools of %s: %w", c.thread, store.ErrToolsUnsupported)
	}
	var out *[]string
	var err error
	if c.path == pathNarrow {
		out, err = tk.NarrowTools(ctx, c.thread, &c.tools)
	} else {
		out, err = tk.ReadTools(ctx, c.thread)
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(toolsAnswer{Tools: out})
}

// ReadTools reads the tools thread was narrowed to, as the served driver
// keeps them: store.ErrToolsUnsupported when it keeps none.
func (c *Client) ReadTools(ctx context.Context, thread string) (*[]string, error) {
	if err := contract.CheckThread(thread); err != nil {
		return nil, fmt.Errorf("read tools of %s: %w", thread, err)
	}
	var a toolsAnswer
	if err := c.do(ctx, http.MethodGet, pathTools, url.Values{"thread": {thread}}, nil, &a); err != nil {
		return nil, fmt.Errorf("read tools of %s: %w", thread, err)
	}
	return a.Tools, nil
}

// NarrowTools narrows thread's tools by the list by with the served driver, in
// one step there: store.ErrToolsUnsupported when it keeps none.
func (c *Client) NarrowTools(ctx context.Context, thread string, by *[]string) (*[]string, error) {
	if by == nil {
		return c.ReadTools(ctx, thread)
	}
	if err := contract.CheckThread(thread); err != nil {
		return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
	}
	if err := store.CheckTools(*by); err != nil {
		return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
	}
	body, err := json.Marshal(*by)
	if err != nil {
		return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
	}
	var a toolsAnswer
	if err := c.do(ctx, http.MethodPost, pathNarrow, url.Values{"thread": {thread}}, body, &a); err != nil {
		return nil, fmt.Errorf("narrow tools of %s: %w", thread, err)
	}
	if a.Tools == nil {
		return nil, fmt.Errorf("narrow tools of %s: the store bridge answered every tool to a narrowing", thread)
	}
	return a.Tools, nil
}

// ReadTools reads thread's tools through the child.
func (c *Child) ReadTools(ctx context.Context, thread string) (tools *[]string, err error) {
	err = c.call(ctx, func(cl *Client) error {
		tools, err = cl.ReadTools(ctx, thread)
		return err
	})
	return tools, err
}

// NarrowTools narrows thread's tools through the child. Sent again after
// the child died under it, it narrows by the same list: no wider.
func (c *Child) NarrowTools(ctx context.Context, thread string, by *[]string) (tools *[]string, err error) {
	err = c.call(ctx, func(cl *Client) error {
		tools, err = cl.NarrowTools(ctx, thread, by)
		return err
	})
	return tools, err
}
