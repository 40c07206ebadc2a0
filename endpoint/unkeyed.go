package endpoint

import (
	"container/list"
	"net"
	"net/http"
	"sync"
)

// DefaultMaxUnkeyed bounds the connections an endpoint holds at once that
// haven't yet given a key (Config.MaxUnkeyed).
const DefaultMaxUnkeyed = 256

// unkeyed tracks the connections that haven't yet given a key: from
// accept until their upgrade hands them over (only a keyed request is
// upgraded) or they close. Past max, the oldest is closed to make room,
// so connections without the key, however many, never hold more than
// max of the process's descriptors, and one that comes with the key
// always gets a slot: it is the newest, and a flood held open is the
// oldest.
type unkeyed struct {
	max int

	mu      sync.Mutex
	order   list.List // of net.Conn, oldest first
	at      map[net.Conn]*list.Element
	evicted int // closed to make room, over the endpoint's life
	most    int // the most held at once
}

func newUnkeyed(max int) *unkeyed {
	return &unkeyed{max: max, at: map[net.Conn]*list.Element{}}
}

// connState is http.Server's ConnState hook.
func (u *unkeyed) connState(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		u.add(c)
	case http.StateHijacked, http.StateClosed:
		u.remove(c)
	}
}

// add counts a new connection, closing the oldest when past max.
func (u *unkeyed) add(c net.Conn) {
	u.mu.Lock()
	u.at[c] = u.order.PushBack(c)
	var oldest net.Conn
	if u.order.Len() > u.max {
		e := u.order.Front()
		oldest = u.order.Remove(e).(net.Conn)
		delete(u.at, oldest)
		u.evicted++
	}
	u.most = max(u.most, u.order.Len())
	u.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
}

func (u *unkeyed) remove(c net.Conn) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if e, ok := u.at[c]; ok {
		u.order.Remove(e)
		delete(u.at, c)
	}
}

// UnkeyedStats says how the endpoint held connections without a key.
type UnkeyedStats struct {
	Held    int // held now
	Most    int // the most held at once
	Evicted int // the oldest closed to make room for a newer one
}

func (u *unkeyed) stats() UnkeyedStats {
	u.mu.Lock()
	defer u.mu.Unlock()
	return UnkeyedStats{Held: u.order.Len(), Most: u.most, Evicted: u.evicted}
}
