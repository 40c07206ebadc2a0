//go:build !linux

package conformance

import (
	"fmt"
	"net/netip"
	"runtime"
)

// ReadNoDelay reads TCP_NODELAY from a socket of process pid where the
// system says; only Linux says, through /proc and pidfd_getfd.
func ReadNoDelay(pid int, local, peer netip.AddrPort) (bool, error) {
	return false, fmt.Errorf("read TCP_NODELAY of %d on %s: %w", pid, runtime.GOOS, ErrUnsupported)
}
