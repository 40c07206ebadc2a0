//go:build !linux

package porthold

// Find is not known here: only Linux says which process holds a port
// (through /proc), so a port taken is said to be taken, by whom unknown.
func Find(port int) (Holder, bool) { return Holder{}, false }

// findsHolders says Find can find a port's holder on this system.
const findsHolders = false
