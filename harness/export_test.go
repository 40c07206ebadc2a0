package harness

// What the package's external tests (package harness_test, built on
// harness/harnesstest) read of its insides.

// StopNote ends a turn stopped by a cancel; CutNote an answer cut at the
// bridge's limit.
const (
	StopNote = stopNote
	CutNote  = cutNote
)

// Waiting says whether a conversation's events end in a message the
// harness still has to answer.
var Waiting = waiting

// Summarizing is the channel closed once the summary after an answer in
// agent's thread ends; false when none is under way.
func (h *Harness) Summarizing(agent, thread string) (<-chan struct{}, bool) {
	v, ok := h.summarizing.Load(turnKey(agent, thread))
	if !ok {
		return nil, false
	}
	return v.(chan struct{}), true
}

// SetOnWaitSummarized has f called as a message begins to wait for a
// summary. Set before any message comes.
func (h *Harness) SetOnWaitSummarized(f func()) { h.onWaitSummarized = f }

// HistoryLen is how many conversations' events the harness keeps.
func (h *Harness) HistoryLen() int { return h.hist.len() }

// SetIdleLeast sets the heap held below which nothing is given back.
func (h *Harness) SetIdleLeast(n uint64) { h.idle.least = n }

// IdleFrees is how many times memory was given back.
func (h *Harness) IdleFrees() int64 { return h.idle.frees.Load() }

// BuiltAfresh is a request's messages made afresh from a conversation's
// events at the window's checkpoint cp, as a turn made them before its
// window was kept (window.Of's events, the summary copied in front,
// buildRequest), for a model that takes what takes says.
var BuiltAfresh = builtAsBefore
