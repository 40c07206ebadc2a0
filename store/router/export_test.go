package router

import "time"

// MoveKindClock sets the clock the router's remembered kinds are trusted
// by, until the returned restore.
func MoveKindClock(now func() time.Time) (restore func()) {
	old := kindNow
	kindNow = now
	return func() { kindNow = old }
}

// KindRemembered says the router remembers dir's kind.
func KindRemembered(dir string) bool {
	routerKinds.mu.Lock()
	defer routerKinds.mu.Unlock()
	_, ok := routerKinds.m[dir]
	return ok
}
