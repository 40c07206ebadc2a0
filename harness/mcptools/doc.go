// Package mcptools is Link Harness's tools, reached over MCP: a client
// (Streamable HTTP, github.com/modelcontextprotocol/go-sdk) of the servers
// Link's tool bridge already runs, filling the turn's harness.Tools seam.
// Link Harness runs no code of its own for a tool.
//
// The servers are the ones an agent's environment names: $LNK_MEMORY
// (memory), $LNK_SCHEDULER (scheduler), $LNK_RUN, $LNK_FILE and $LNK_CODE
// (run, file, code), and each $LNK_TOOL_<NAME> (<name> in lower case, so a
// team's memory at $LNK_TOOL_<TEAM>_MEMORY is <team>_memory). Each call a
// server lists is offered to the model as <tool>__<call>, every offer in
// order of its name, whatever order a server lists its calls in.
//
// Sessions are opened only when they are needed: a process lists every
// tool at once at its first turn, and afterwards a session starts only
// when the model calls a tool. The sessions of memory, run, file, code,
// the scheduler, a team's memory and the namespaces (Config.KeepSession) are kept
// between turns, for all of an agent's conversations, and ended once idle
// for 10 minutes or an hour after they started; every other tool's
// session is the turn's own, one per conversation, ended with the turn.
// Each session starting lists the tool's calls again. A tool has 30
// seconds to start and list; one that doesn't is given up on and its
// connection closed.
//
// Each tool's list (its calls, and its server's instructions) is kept in
// the process and in tool-lists.json in the agent's home, with a hash of
// its address: read once a process, written only when a list changes. A
// tool that fails to start in a new process is offered, and described,
// from the file as it was, and a call to it is answered as unavailable; a
// tool never listed that doesn't answer is left out of that turn only.
//
// Everything is keyed by agent: each agent has its own environment
// (Config.Env), lists, file and sessions.
package mcptools
