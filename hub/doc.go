// Package hub is Harness Hub: it serves a harness that speaks ACP over
// stdio (Claude Code, Codex, Gemini CLI, Link Harness itself) to Link's
// bridges as an endpoint.Handler, so the endpoint package's server gives
// it the proof, the key, agent routing and TCP_NODELAY.
//
// One harness process runs behind a Hub, in a process group of its own,
// started on the first message and again whenever its output ends; a
// start that fails is tried again only after a growing wait. Each thread
// (telegram:42) is given a session of the harness's own, kept in a file
// so it goes on after a restart. Messages pass through as raw JSON, only
// the session's id changed (and a new message of an answer set apart by a
// blank line), so what a harness streams reaches the bridge as it came.
package hub
