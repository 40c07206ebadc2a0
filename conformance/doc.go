// Package conformance is the endpoint contract's conformance kit: one named
// check per rule of spec/endpoint.txt, run against any endpoint over the
// wire, as Link's bridges reach it, by a client of the kit's own (not the
// endpoint package's, so the two can't share a misreading). An endpoint's
// own tests call Run(t, target), as testing/fstest's callers do; lnk
// conformance calls Check and prints one line per check.
//
// A check that needs a hook the target doesn't offer (a process whose
// socket to read, a tool call to trigger, a recording of what its model
// saw, an answer left for recover) is reported as not run, never as
// passed; Run skips its subtest.
//
// How the kit reads what the spec leaves open:
//   - Only the proof check requires the proof to be right; the others
//     require it answered (200), so a wrong proof fails one check, not all.
//   - A missing or wrong key is refused 401 or 403, with no upgrade and a
//     body holding neither the key nor JSON-RPC.
//   - A refused _meta.link is a JSON-RPC error -32602 with no
//     agent_message_chunk before it; the same field said right is then
//     answered on the same thread, so an endpoint that refuses every
//     _meta.link fails; and with a recording model, the model saw the
//     second message and nothing of the first.
//   - TCP_NODELAY is read on the server's socket of a proved connection,
//     once the proof is answered and again once upgraded; a system that
//     won't say (no /proc, no right to trace the process) is not run.
//   - Every check talks on threads of its own, link:conformance-<run>-...,
//     whose answers a running bridge leaves kept.
package conformance
