package memory

// FullLooks is how many times m looked at every source, and whether it
// has the kernel's record of changes (a watcher).
func FullLooks(m *Memory) (looks int, watched bool) {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	return m.fullLooks, m.w != nil && m.w.wrong == nil
}
