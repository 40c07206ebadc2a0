// Package porthold says which process holds a TCP port on this machine,
// so that a port already taken is refused naming who holds it and what
// to do next.
package porthold

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// Holder is the process listening on a port.
type Holder struct {
	PID     int
	Command string // its command line, cut to maxCommand bytes
}

// maxCommand bounds a holder's command line as said.
const maxCommand = 200

// Taken says whether err is a listen's refusal of an address in use.
func Taken(err error) bool {
	return err != nil && (errors.Is(err, syscall.EADDRINUSE) ||
		strings.Contains(err.Error(), "address already in use") ||
		strings.Contains(err.Error(), "Only one usage of each socket address"))
}

// Explain is err, a listen on the loopback port that failed, saying who
// holds the port when it is taken (found on Linux; elsewhere only that it
// is taken) and then next, what to do; any other err is returned as it
// is.
func Explain(err error, port int, next string) error {
	if !Taken(err) {
		return err
	}
	h, ok := Find(port)
	if !ok {
		return fmt.Errorf("port %d is taken by another process: %s (%w)", port, next, err)
	}
	return fmt.Errorf("port %d is taken by process %d (%s): stop it (kill %d), or %s (%w)", port, h.PID, h.Command, h.PID, next, err)
}
