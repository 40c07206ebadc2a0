// Package endpoint is the endpoint contract's server side, shared by Link
// Harness and Harness Hub, and its client side, which Link's bridge and
// lnk agent chat use. The server answers GET /_link/proof, upgrades
// /acp to a WebSocket on the proved connection once the routed agent's
// key is given, answers /health, and has TCP_NODELAY on on every
// connection it accepts (Go's accept sets it). The client proves the
// endpoint before it sends the key, then upgrades on the same
// connection.
package endpoint
