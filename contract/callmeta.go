package contract

import "encoding/json"

// CallMeta is what a tool call carries beside its arguments, in the MCP
// call's _meta under link.local/ keys: the conversation it is made in
// (link.local/thread), the hops of the message being answered
// (link.local/hops), the tools the conversation has this turn
// (link.local/tools, nil: not narrowed) and its model (link.local/model).
// Link Harness and the hub's adapter fill it; harness/mcptools sends it;
// Link's tools (the scheduler's team) read it.
type CallMeta struct {
	Thread string
	Hops   int
	Tools  *[]string
	Model  string
	// Specs are the agent's spec's tables of its tools ([tool.<name>]
	// over [tools], as JSON objects), by tool name (web, not web__fetch),
	// set only for a message from others whose firing has tools (a
	// subagent's task): the called tool's goes as link.local/spec.
	Specs map[string]json.RawMessage
}
