package harness

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultIdleFree is how long a harness waits with nothing running before
// it gives its free memory back to the system.
const DefaultIdleFree = 5 * time.Second

// idleLeast is the heap an idle harness must hold before it gives
// memory back: Go's own least heap goal.
const idleLeast = 4 << 20

// idle gives the process's free memory back to the system
// (debug.FreeOSMemory: a collection, then the free pages returned) once no
// turn or task has run for a while. Go keeps the pages its heap grew to
// for the next turn; an agent idle for minutes or hours between messages
// needn't hold them: after 200 messages an idle harness held 7 MB of its
// own where 2 MB were live (docs/decisions/009-drivers-as-plugins.md).
// A turn after pays a few page faults for what it allocates.
type idle struct {
	after time.Duration // <= 0: never
	// least is the heap held, in bytes, below which nothing is given
	// back: a collection of a heap that small touches more pages than it
	// frees (just started, an idle harness grew 0.5 MB by it).
	least  uint64
	active atomic.Int32 // turns and tasks running
	frees  atomic.Int64 // times memory was given back
	// afterFunc times the release (Config.AfterFunc).
	afterFunc func(d time.Duration, f func()) (stop func() bool)

	mu     sync.Mutex
	disarm func() bool // the release armed, nil for none
	done   bool
}

// enter counts a turn or task in.
func (i *idle) enter() { i.active.Add(1) }

// leave counts one out; the last out arms the timer, from now.
func (i *idle) leave() {
	if i.active.Add(-1) != 0 || i.after <= 0 {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.done {
		return
	}
	if i.disarm != nil {
		i.disarm()
	}
	i.disarm = i.afterFunc(i.after, i.fire)
}

// fire gives memory back unless something began meanwhile (its end arms
// the timer again).
func (i *idle) fire() {
	if i.active.Load() != 0 || heapHeld() < i.least {
		return
	}
	debug.FreeOSMemory()
	i.frees.Add(1)
}

// heapHeld is the heap's memory held from the system and not given back:
// its objects, the unused parts of its spans, and its free spans.
func heapHeld() uint64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			n += v.Value.Uint64()
		}
	}
	return n
}

// stop disarms the timer for good.
func (i *idle) stop() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.done = true
	if i.disarm != nil {
		i.disarm()
	}
}
