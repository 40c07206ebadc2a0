package conformance

import "errors"

// ErrNoSocket says no socket of the process has the addresses asked for:
// the pid is not the server's, or the connection has closed.
var ErrNoSocket = errors.New("no such socket")

// ErrUnsupported says this system can't say a socket's TCP_NODELAY.
var ErrUnsupported = errors.New("not supported on this system")

// truncate cuts s for quoting in a result, so an over-long value is never
// echoed whole.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
