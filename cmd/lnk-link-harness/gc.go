package main

import "runtime/debug"

// gcPercent is the harness's GOGC unless the environment sets one: a
// warm turn allocates about 80 KB, and at 200 rather than Go's 100 the
// collector runs half as often under many conversations at once, for
// about 10% less CPU a turn (BenchmarkMessagesAtOnce/64, 3 interleaved
// pairs); the heap between collections may grow to three times what is
// live rather than twice, and an idle harness gives it back
// (harness.Config.IdleFree).
const gcPercent = 200

// setGC sets the collector's target to gcPercent when env names no
// GOGC, which the runtime read already, and says what it left in place.
func setGC(env map[string]string) int {
	if _, set := env["GOGC"]; set {
		old := debug.SetGCPercent(100)
		debug.SetGCPercent(old)
		return old
	}
	debug.SetGCPercent(gcPercent)
	return gcPercent
}
