// Package bridge carries a conversations driver's calls between Link
// Harness and the agent's store bridge, which runs the driver outside the
// harness's sandbox (spec: "Behind the store bridge"). The server runs a
// store.Conversations behind HTTP on a unix socket or a loopback port; the
// client, Dial's, is a store.Conversations (and store.LatestReader) like
// any driver, so the harness neither knows nor cares which driver it is.
//
// The calls are the driver's three (append, read from, lease and
// release), the optional Latest, the optional store.ToolsKeeper's two
// (tools, narrow), and the optional store.Forgetter's forget:
//
//	POST /v1/append?thread=T          body: the event's line (store.MarshalLine)
//	GET  /v1/read?thread=T&from=N     answer: the events' lines
//	GET  /v1/latest?thread=T&n=N      answer: the events' lines
//	POST /v1/lease?thread=T&holder=H&ttl=NANOSECONDS   answer: the lease, JSON
//	POST /v1/release?thread=T&holder=H
//	GET  /v1/tools?thread=T           answer: {"tools":null} or {"tools":[names]}
//	POST /v1/narrow?thread=T          body: [names]; answer: as tools's
//	POST /v1/forget?thread=T
//	GET  /v1/ping
//
// Each call is proved with the agent's key, never sent: Link-Store-Proof
// is the HMAC-SHA256 (Proof) of a label, the call's time and a nonce, its
// method, its request URI and its body. A call whose proof is wrong,
// missing, more than MaxSkew from the server's clock, or seen before gets
// 401 and nothing else. A refusal of the driver's crosses as a status and
// a code (errorCode), so errors.Is(err, store.ErrSeqTaken), ErrLeaseHeld
// and ErrCorrupt hold on the client's side as on the driver's,
// store.ErrToolsUnsupported when the served driver keeps no tools, and
// errors.ErrUnsupported when it can't forget.
//
// The client says Link-Store-Wire: 2 on every call. The first wire's
// client said nothing, and read the tools refusal as tools_not_kept
// only: the server answers it so, and a client that says 2 or more
// tools_unsupported; the client reads either (wire.go).
//
// An append whose answer was lost (the client's deadline passed, the
// connection broke) may still have landed. Sent again, it succeeds: the
// server takes a number already written whose event is the one sent,
// byte for byte, as that append's success (sameLine).
package bridge

import (
	"errors"
	"time"
)

// DefaultTimeout is how long the client lets a call run before it stops
// it, on top of the caller's context (spec: "A call is stopped past 30
// seconds").
const DefaultTimeout = 30 * time.Second

// MaxSkew is how far a call's time may be from the server's clock, either
// way, and so how long the server remembers a proof to refuse it again.
const MaxSkew = 60 * time.Second

// ErrRefused: the server refused the call's proof (401). It says no more,
// so neither does the error.
var ErrRefused = errors.New("store bridge refused the call's proof")

// The calls' paths.
const (
	pathAppend  = "/v1/append"
	pathRead    = "/v1/read"
	pathLatest  = "/v1/latest"
	pathLease   = "/v1/lease"
	pathRelease = "/v1/release"
	pathPing    = "/v1/ping"
	pathTools   = "/v1/tools"
	pathNarrow  = "/v1/narrow"
	pathForget  = "/v1/forget"
)

// The proof's headers.
const (
	headerTime  = "Link-Store-Time"  // unix milliseconds, decimal
	headerNonce = "Link-Store-Nonce" // 32 lowercase hex characters
	headerProof = "Link-Store-Proof" // 64 lowercase hex characters
)

// maxHolder bounds a lease holder's name.
const maxHolder = 256
