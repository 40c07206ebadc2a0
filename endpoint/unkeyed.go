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
// upgraded) or they close. Past max, one is closed to make room, so
// connections without the key, however many, never hold more than max
// of the process's descriptors. The one closed is the oldest of the
// lowest rank, silent ones first (a stream of new connections closes
// its own), then those whose request is under way, then those that got
// their proof (a bridge's, whose upgrade follows at once): a connection
// that got its proof is closed only when every other held has one too,
// the oldest proved first, never the newest
// (docs/decisions/049-proved-evicted-last.md).
type unkeyed struct {
	max int

	mu      sync.Mutex
	ranks   [3]list.List // of net.Conn by rank (silent, asking, proved), oldest first
	at      map[net.Conn]holding
	evicted int // closed to make room, over the endpoint's life
	most    int // the most held at once
}

// The ranks of a connection held, closed lowest first.
const (
	silent = iota // no request under way, and no proof
	asking        // a request under way, no proof yet
	proved        // got its proof
)

// holding is where a connection is held: its rank, and its place there.
type holding struct {
	rank int
	e    *list.Element
}

func newUnkeyed(max int) *unkeyed {
	return &unkeyed{max: max, at: map[net.Conn]holding{}}
}

// connState is http.Server's ConnState hook.
func (u *unkeyed) connState(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		u.add(c)
	case http.StateActive:
		u.move(c, asking, false)
	case http.StateIdle:
		u.move(c, silent, false)
	case http.StateHijacked, http.StateClosed:
		u.remove(c)
	}
}

// count is how many connections are held.
func (u *unkeyed) count() int {
	return u.ranks[silent].Len() + u.ranks[asking].Len() + u.ranks[proved].Len()
}

// add counts a new connection, closing one when past max: the oldest of
// the lowest rank, never c itself, the newest.
func (u *unkeyed) add(c net.Conn) {
	u.mu.Lock()
	u.at[c] = holding{silent, u.ranks[silent].PushBack(c)}
	var oldest net.Conn
	if u.count() > u.max {
		u.promoteAsking(c)
		for r := range u.ranks {
			e := u.ranks[r].Front()
			if e != nil && e.Value == c {
				e = e.Next()
			}
			if e != nil {
				oldest = u.ranks[r].Remove(e).(net.Conn)
				break
			}
		}
		delete(u.at, oldest)
		u.evicted++
	}
	u.most = max(u.most, u.count())
	u.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
}

// maxPeeks bounds the silent connections add looks at for a request
// begun, so a flood that sends a byte on each costs a few peeks a
// connection.
const maxPeeks = 4

// promoteAsking moves the oldest silent connections (but c) whose
// request has begun, bytes waiting that the server hasn't read yet, to
// those asking: a bridge's connection, accepted among a stream of
// silent ones, has sent its request, which a busy server may not have
// read before the stream makes it the oldest silent.
func (u *unkeyed) promoteAsking(c net.Conn) {
	e := u.ranks[silent].Front()
	for range maxPeeks {
		if e == nil {
			return
		}
		next := e.Next()
		if o := e.Value.(net.Conn); o != c && hasBytes(o) {
			u.ranks[silent].Remove(e)
			u.at[o] = holding{asking, u.ranks[asking].PushBack(o)}
		} else if o != c {
			return // the oldest silent is silent indeed
		}
		e = next
	}
}

// move moves c to rank, the newest there; one proved stays so, unless
// force.
func (u *unkeyed) move(c net.Conn, rank int, force bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	h, ok := u.at[c]
	if !ok || h.rank == proved && !force {
		return
	}
	u.ranks[h.rank].Remove(h.e)
	u.at[c] = holding{rank, u.ranks[rank].PushBack(c)}
}

// provedTo notes that c got its proof: closed only after every other.
func (u *unkeyed) provedTo(c net.Conn) { u.move(c, proved, true) }

func (u *unkeyed) remove(c net.Conn) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if h, ok := u.at[c]; ok {
		u.ranks[h.rank].Remove(h.e)
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
	return UnkeyedStats{Held: u.count(), Most: u.most, Evicted: u.evicted}
}
