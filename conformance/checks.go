package conformance

import "fmt"

// checks are the kit's checks, one per rule of spec/endpoint.txt, in the
// order they run. Each rule is quoted in the spec's own words.
var checks = append([]check{
	{
		name: "proof",
		rule: `GET /_link/proof with Link-Challenge: <32 to 128 hex characters> and Link-Agent, answered 200 with Link-Proof: the HMAC-SHA256 of "link endpoint proof", a zero byte and the challenge, keyed with endpoint_key, in hex`,
		run:  checkProof,
	},
	{
		name: "proof-malformed",
		rule: "Link-Challenge: <32 to 128 hex characters>; a malformed challenge is refused (400)",
		run:  checkProofMalformed,
	},
	{
		name:  "tcp-nodelay",
		rule:  "An endpoint that answers the proof sets TCP_NODELAY on the connections it accepts",
		needs: needPID,
		run:   checkNoDelay,
	},
	{
		name: "key",
		rule: "Each message is a WebSocket opened at the endpoint, upgraded on the connection that proved it's the harness, with Authorization: Bearer <endpoint_key>; a missing or wrong key is refused, nothing else said",
		run:  checkKey,
	},
	{
		name: "routing-name",
		rule: "one naming an agent it doesn't run is refused (404) before the model sees it",
		run:  checkRoutingName,
	},
	{
		name: "routing-default",
		rule: "One naming no agent is its own agent's (LNK_AGENT)",
		needs: func(t Target) string {
			return missing(!t.Nameless, "agent of its own for a connection naming none (Nameless)")
		},
		run: checkRoutingDefault,
	},
	{
		name:  "routing-id",
		rule:  "an endpoint answering for more than one owner's agents finds the agent by Link-Agent-Id, refuses one whose ID and name disagree (404)",
		needs: func(t Target) string { return missing(t.AgentID == "", "agent ID (AgentID)") },
		run:   checkRoutingID,
	},
	{
		name:  "routing-shared",
		rule:  "and one naming by name alone an agent two owners share (409)",
		needs: func(t Target) string { return missing(t.Shared == "", "name two owners share (Shared)") },
		run:   checkRoutingShared,
	},
	{
		name: "message",
		rule: "one JSON-RPC message to a text frame: initialize, then session/resume of the session its thread names, then session/prompt",
		run:  checkMessage,
	},
	{
		name: "taken",
		rule: "The harness tells _link/taken as soon as it has the message, before its answer",
		run:  checkTaken,
	},
	{
		name: "answer",
		rule: "The answer streams as agent_message_chunks ... The prompt answers once the turn ends",
		run:  checkAnswer,
	},
	{
		name:  "tool-call",
		rule:  "each call it makes as a tool_call titled with the tool's name (memory__search) and its end as a tool_call_update",
		needs: func(t Target) string { return missing(t.ToolCall == nil, "tool call to trigger (ToolCall)") },
		run:   checkToolCall,
	},
}, append(metaChecks(), []check{
	{
		name:  "tools-narrow",
		rule:  "The harness keeps the list with the conversation and offers it only those of its tools from then on. A later list narrows it to the tools in both, never widens it, and a message without one keeps it",
		needs: needNarrowing,
		run:   checkNarrowing,
	},
	{
		name:  "recover",
		rule:  `_link/recover answers {"answers": [{"thread", "text"}]}: each answer whose caller went before it was told it, which nobody waited for, handed over once`,
		needs: needRecover,
		run:   checkRecover,
	},
	{
		name:  "recover-two-phase",
		rule:  `With {"two_phase": true}, each answer also has an "id" and is kept, handed over again at each ask, until a request with {"done": ["<id>", ...]} lets those go. That one answers {"answers": []}, and an id that isn't one is passed over`,
		needs: needRecover,
		run:   checkRecoverTwoPhase,
	},
}...)...)

// missing names a lacking hook when lacks is true.
func missing(lacks bool, hook string) string {
	if lacks {
		return hook
	}
	return ""
}

func needPID(t Target) string {
	return missing(t.PID <= 0, "process whose socket to read (PID)")
}

func needNarrowing(t Target) string {
	switch {
	case t.Model == nil:
		return "recording model (Model)"
	case len(t.Tools) < 2:
		return fmt.Sprintf("two tools the agent offers (Tools has %d)", len(t.Tools))
	}
	return ""
}

func needRecover(t Target) string {
	return missing(t.Recover == nil, "answer left for recover (Recover)")
}
