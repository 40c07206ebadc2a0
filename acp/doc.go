// Package acp speaks JSON-RPC 2.0 and the Agent Client Protocol over a
// Framer: a WebSocket (one message to a text frame) or stdio (one message
// to a line). Conn is a small JSON-RPC peer that keeps params and results
// raw, so a proxy forwards them untouched; Serve is the server side of one
// message's connection, driving an Agent; Client is the side Link's bridge
// speaks.
package acp
