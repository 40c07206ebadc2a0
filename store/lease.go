package store

import (
	"fmt"
	"time"
)

// Grant decides a call to Lease for holder at now, given cur, the lease
// as the driver read it (the zero Lease, or one with no holder, for none).
// No lease, one past its expiry, or holder's own is holder's, until
// now+ttl: the lease returned, with no monotonic reading, for the driver
// to write. Another holder's lease that has not expired is ErrLeaseHeld,
// naming its holder and expiry, returned with cur as it stands. A ttl of
// zero or less gives a lease already expired, which anyone may take.
// Reading and writing the lease, and holding it still between them, is
// the driver's.
func Grant(cur Lease, holder string, ttl time.Duration, now time.Time) (Lease, error) {
	if cur.Holder != "" && cur.Holder != holder && now.Before(cur.Expires) {
		return cur, fmt.Errorf("%w by %s until %s", ErrLeaseHeld, cur.Holder, cur.Expires.UTC().Format(time.RFC3339Nano))
	}
	return Lease{Holder: holder, Expires: now.Add(ttl).Round(0)}, nil
}
