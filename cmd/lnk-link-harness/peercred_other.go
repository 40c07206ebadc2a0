//go:build !linux

package main

import (
	"errors"
	"net"
)

// peerIsOwner refuses every control connection where the system can't
// say the peer's user as Linux's SO_PEERCRED does: a unit is bound on
// Linux alone.
func peerIsOwner(net.Conn) error {
	return errors.New("a blank unit is bound on Linux alone (SO_PEERCRED)")
}
