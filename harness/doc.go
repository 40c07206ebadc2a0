// Package harness is Link Harness: an acp.Agent that answers an agent's
// messages by calling its model itself, keeping each conversation as an
// append-only log of events in the agent's store, and holding nothing
// that matters in memory, so any process sharing the store can take the
// next turn, and a turn a crash cut short is finished by the next process.
//
// # Using it
//
// cmd wires everything that knows a file format or a dependency, and
// hands the harness plain values:
//
//	h, err := harness.New(harness.Config{
//		Home:     home,                    // every path is store.For(Home, agent)
//		Drivers:  openDrivers,             // func(store.Paths) (map[string]store.Conversations, error)
//		Openers:  openers,                 // for convert.Resolve, optional
//		Settings: readConfigJSON,          // func(ctx, store.Paths) (harness.Settings, error), each turn
//		Route:    routeModel,              // func(name) (model.Route, error); nil is model.Resolve(name, Env)
//		Provider: makeProvider,            // func(model.Route) (model.Provider, error), each model call
//		Tools:    tools,                   // harness.Tools; nil offers none
//	})
//	h.Start(agent)                        // finish what a crash left, now and every SweepEvery
//	endpoint.AgentHandler{Agent: h}       // serve it
//	defer h.Close()                       // waits for turns (callers gone included)
//
// Provider is called for every model call with the route of the
// conversation's model: cmd keeps one provider per route (model/anthropic,
// model/openai, model/scripted's Offline for "offline"). The Tools seam is
// Offer (the tools this turn, narrowed), Call (one call, answered in text,
// never a Go error) and EndTurn, at each turn's end; tools that keep each
// conversation's sessions apart (ThreadEnder) are told EndThreadTurn
// instead, so one conversation's end leaves another's turn its sessions.
// harness/mcptools fills it over MCP.
//
// # A turn
//
// The agent is an argument of every turn (acp.Prompt.Agent): its paths
// come from store.For, its settings are read at each turn, and one turn
// runs at a time per conversation, under the store's lease (held by one
// process's one turn, renewed while it runs). Prompt narrows the
// conversation's tools (tools.json), keeps a model the message names as a
// model_set event, stores the message with its header (Header), tells
// _link/taken, and runs rounds: the model streams its answer, each answer
// an event recording model, provider, response id, usage, latency, cost
// and thinking, and what it saw; a round's calls run at once, each answer
// its own event (at most 32 KiB). After eight rounds of calls the model is
// asked once more and told to call nothing. The answer streamed never
// passes Config.MaxAnswer (16 MiB): it is ended there, saying why.
// Once the turn's last answer is stored, still under the lease, what was
// said since the last answer is added to the conversation's copy for
// people (chat.md, transcript.Append) from the events the turn holds; a
// compact conversation has none, and a copy that fails is logged, never
// the turn's failure.
//
// A message that comes while a turn runs (here or in another process on
// the same store) joins it: stored as steered, answered at once with
// _meta.link.steered, and seen by the model at the turn's next round,
// even past the last round of calls; the turn looks again after letting
// its lease go, and the message's process takes the lease once more
// after storing it, to answer it in a turn of its own when the lease
// went before. A turn runs on the harness's life, not the caller's:
// when the caller goes its answer is kept (answers.json) and handed over
// once by _link/recover. In a link: thread, the process that told a
// message of lnk agent chat send steered keeps the answer that answers
// it for it (steered.go), whichever process ran the turn.
//
// # After a crash
//
// Start and every _link/recover sweep the agent's conversations for a
// message no answer saw and no lease covers, and finish each in a task
// of its own: calls already answered are never made again, those left
// without an answer are told to the model as unanswered, and the answer
// is kept for _link/recover.
package harness
