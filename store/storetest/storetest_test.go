package storetest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/storetest"
)

// memory keeps conversations in memory: the least a store does, so the
// suite is shown to pass for a correct one without any driver's files.
type memory struct {
	mu     sync.Mutex
	events map[string][]store.Event
	leases map[string]store.Lease
}

var _ store.Conversations = (*memory)(nil)

func newMemory() *memory {
	return &memory{events: map[string][]store.Event{}, leases: map[string]store.Lease{}}
}

func (m *memory) Append(ctx context.Context, thread string, e store.Event) error {
	if err := contract.CheckThread(thread); err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.Seq != int64(len(m.events[thread]))+1 {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, store.ErrSeqTaken)
	}
	m.events[thread] = append(m.events[thread], e)
	return nil
}

func (m *memory) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	if err := contract.CheckThread(thread); err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	es := m.events[thread]
	from = max(from, 1)
	if from > int64(len(es)) {
		return nil, nil
	}
	return append([]store.Event(nil), es[from-1:]...), nil
}

func (m *memory) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	if err := contract.CheckThread(thread); err != nil {
		return store.Lease{}, fmt.Errorf("lease %s: %w", thread, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if l, ok := m.leases[thread]; ok && l.Holder != holder && now.Before(l.Expires) {
		return store.Lease{}, fmt.Errorf("lease %s: %w by %s", thread, store.ErrLeaseHeld, l.Holder)
	}
	l := store.Lease{Holder: holder, Expires: now.Add(ttl)}
	m.leases[thread] = l
	return l, nil
}

func (m *memory) Release(ctx context.Context, thread, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leases[thread].Holder == holder {
		delete(m.leases, thread)
	}
	return nil
}

func TestSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Conversations { return newMemory() })
}

func TestEventsDiffer(t *testing.T) {
	// Events of two tags differ, so the thread and race tests can tell
	// one writer's from another's.
	for seq := int64(1); seq <= 6; seq++ {
		a, b := storetest.Event(seq, "a"), storetest.Event(seq, "b")
		if a.Kind == store.KindModelSet || a.Kind == store.KindCheckpoint {
			continue
		}
		if storetest.Equal(a, b) {
			t.Errorf("event %d (%s) is the same for two tags", seq, a.Kind)
		}
		if !storetest.Equal(a, storetest.Event(seq, "a")) {
			t.Errorf("event %d differs from itself", seq)
		}
	}
}

func BenchmarkMemory(b *testing.B) {
	storetest.Benchmarks{
		Open:  func(tb testing.TB) store.Conversations { return newMemory() },
		Sizes: []int{1000},
	}.Run(b)
}
