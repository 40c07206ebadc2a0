// Package harness is Link Harness: an acp.Agent that answers an agent's
// messages by calling its model itself, keeping each conversation as an
// append-only log of events in the agent's store, and holding nothing
// that matters in memory, so any process sharing the store can take the
// next turn, and a turn a crash cut short is finished by the next process.
//
// The agent is an argument of every turn (acp.Prompt.Agent): its paths
// come from store.For, its settings are read at each turn through
// Config.Settings, and one turn runs at a time per conversation, under
// the store's lease. A message that comes while a turn runs joins it
// (steering): it is stored, answered at once as steered, and the running
// turn's model sees it at its next round.
//
// The harness takes what only cmd knows through Config: how settings are
// read (Settings), which drivers keep conversations (Drivers), how a
// model's name is routed (Route) and which Provider serves a route
// (Provider), and the tools (Tools). New makes one; Start begins its
// sweep for turns a crash left unfinished; Close waits for its turns.
package harness
