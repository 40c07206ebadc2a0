// Package contract holds the rules of the endpoint contract between Link's
// bridges and a harness, as pure code: the header names and paths, the
// proof, thread ids and their folder names, _meta.link (LinkMeta) and the
// recover shapes. It does no I/O; every parser here refuses bad input with
// a RuleError naming the rule it broke.
package contract

import "strconv"

// Paths an endpoint answers at.
const (
	ACPPath    = "/acp"         // the WebSocket upgrade, one per message
	ProofPath  = "/_link/proof" // GET: the endpoint proves it holds the key
	HealthPath = "/health"
)

// Headers of the contract.
const (
	HeaderAuthorization = "Authorization" // "Bearer <endpoint key>"
	BearerPrefix        = "Bearer "
	HeaderAgent         = "Link-Agent"
	HeaderAgentID       = "Link-Agent-Id"
	HeaderChallenge     = "Link-Challenge"
	HeaderProof         = "Link-Proof"
	HeaderTools         = "Link-Tools"
)

// Methods Link adds to ACP.
const (
	MethodTaken   = "_link/taken"   // notification: the harness has the message
	MethodRecover = "_link/recover" // request: answers nobody took
)

// Environment variables of the contract.
const (
	EnvPort  = "LNK_PORT"
	EnvAgent = "LNK_AGENT"
)

// DefaultPort is the endpoint's port when LNK_PORT says none.
const DefaultPort = 18800

// EndpointURL is the address of the ACP endpoint on this machine's
// loopback at port.
func EndpointURL(port int) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + ACPPath
}

// Port reads the endpoint's port from the value of LNK_PORT: DefaultPort
// when empty, else a port number.
func Port(env string) (int, error) {
	if env == "" {
		return DefaultPort, nil
	}
	p, err := strconv.Atoi(env)
	if err != nil || p < 1 || p > 65535 {
		return 0, refuse(EnvPort, "a port is a number from 1 to 65535, not %q", truncate(env, 16))
	}
	return p, nil
}
