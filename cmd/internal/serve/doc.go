// Package serve wires Link Harness for the programs that run it: the
// lnk-link-harness server and lnk agent chat, which starts one in its own
// process when no endpoint answers. It holds what only cmd may know: how a
// model's name is routed to a provider (and the provider made), the
// agent's config.json, its drivers (a drivers.Set), and a harness
// served at its endpoint on the loopback (Start).
package serve
