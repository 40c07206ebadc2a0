package bridge

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"time"
)

// Listen listens where a store bridge is reached: on a unix socket
// (network "unix", address its path), made for its owner alone, or on a
// loopback address (network "tcp", 127.0.0.1:PORT or [::1]:PORT; port 0
// takes a free one). A socket left by a bridge that ended is replaced;
// one a running bridge answers on is not.
func Listen(network, address string) (net.Listener, error) {
	switch network {
	case "unix":
		return listenUnix(address)
	case "tcp":
		if err := checkLoopback(address); err != nil {
			return nil, err
		}
		ln, err := net.Listen("tcp", address)
		if err != nil {
			return nil, fmt.Errorf("store bridge: %w", err)
		}
		return ln, nil
	}
	return nil, fmt.Errorf("store bridge: no network %q (unix or tcp)", network)
}

// checkLoopback refuses an address that isn't a loopback IP and a port.
func checkLoopback(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("store bridge: listen on %q: %w", address, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("store bridge: listen on %q: only a loopback address (127.0.0.1, ::1)", address)
	}
	return nil
}

func listenUnix(path string) (net.Listener, error) {
	if path == "" {
		return nil, errors.New("store bridge: no socket path")
	}
	if info, err := os.Lstat(path); err == nil {
		if info.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("store bridge: %s is there and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("store bridge: %s: a bridge answers there already", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("store bridge: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("store bridge: %w", err)
	}
	// Proofs keep others out; the mode keeps them from even asking.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("store bridge: %w", err)
	}
	return ln, nil
}
