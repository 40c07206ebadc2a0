package leasefile

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/lnk-dev/link/store"
)

// sameLease says whether two leases are one: the holder, the instant, and
// the zone it was written in.
func sameLease(a, b store.Lease) bool {
	an, ao := a.Expires.Zone()
	bn, bo := b.Expires.Zone()
	return a.Holder == b.Holder && a.Expires.Equal(b.Expires) && an == bn && ao == bo
}

// A lease as writeLease leaves it (encoded, padded with spaces, a newline)
// is read by hand, not by encoding/json, and reads as itself; so is one
// let go.
func TestDecodePlain(t *testing.T) {
	for _, l := range []store.Lease{
		{Holder: "link-harness-47a4e132cb1f", Expires: time.Date(2026, 12, 2, 3, 55, 39, 123456789, time.UTC)},
		{Holder: "convert", Expires: time.Date(2026, 12, 2, 3, 55, 39, 0, time.UTC)},
		{Holder: "h"},
	} {
		b, err := encode(l)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(l)
		if !bytes.Equal(b, want) {
			t.Fatalf("encode = %s, json.Marshal = %s", b, want)
		}
		b = append(append(b, "      "...), '\n')
		got, ok := decodePlain(b)
		if !ok || !sameLease(got, l) {
			t.Fatalf("decodePlain(%s) = %+v, %v; want %+v read by hand", b, got, ok, l)
		}
	}
}

// FuzzDecode: whatever bytes decode reads by hand, json.Unmarshal reads
// as the same lease.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"holder":"link-harness-47a4e132","expires":"2026-12-02T03:55:39.123456789Z"}` + "   \n"))
	f.Add([]byte(`{"holder":"h","expires":"0001-01-01T00:00:00Z"}` + "\n"))
	f.Add([]byte(`{"holder":"h","expires":"2026-12-02T03:55:39+01:00"}`))
	f.Add([]byte(`{"holder":"h\u0041","expires":"2026-12-02T03:55:39Z"}`))
	f.Add([]byte(`{"holder":"h","expires":"2026-12-02T03:55:39Z"}` + "\x00"))
	f.Add([]byte(`{"holder":"h","expires":"2026-12-02T03:55:39Z","holder":"g"}`))
	f.Add([]byte(`{"Holder":"h","expires":"2026-12-02T03:55:39Z"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, ok := decodePlain(b)
		if !ok {
			return
		}
		var want store.Lease
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("read by hand as %+v; json.Unmarshal refuses it: %v", l, err)
		}
		if !sameLease(l, want) {
			t.Fatalf("read by hand as %+v; json.Unmarshal reads %+v", l, want)
		}
	})
}

// FuzzEncode: encode writes what json.Marshal writes, byte for byte, and
// fails where it fails.
func FuzzEncode(f *testing.F) {
	f.Add("link-harness-47a4e132", int64(1796183739), int64(123456789), 0)
	f.Add("h", int64(-62135596800), int64(0), 0)
	f.Add("a<b>&c\"d\\e\x01é", int64(0), int64(0), 3600)
	f.Add("h", int64(300000000000), int64(1), 0)
	f.Fuzz(func(t *testing.T, holder string, sec, nsec int64, offset int) {
		at := time.Unix(sec, nsec).UTC()
		if offset != 0 {
			at = at.In(time.FixedZone("", offset))
		}
		l := store.Lease{Holder: holder, Expires: at}
		got, err := encode(l)
		want, werr := json.Marshal(l)
		if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("encode(%+v) = %s, %v; json.Marshal = %s, %v", l, got, err, want, werr)
		}
	})
}

// BenchmarkLeaseJSON is a lease read and written again, as each of a
// turn's lease calls does: by hand, and by encoding/json.
func BenchmarkLeaseJSON(b *testing.B) {
	l := store.Lease{Holder: "link-harness-47a4e132cb1f", Expires: time.Date(2026, 12, 2, 3, 55, 39, 123456789, time.UTC)}
	data, _ := json.Marshal(l)
	b.Run("Hand", func(b *testing.B) {
		for b.Loop() {
			got, err := decode(data)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := encode(got); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("EncodingJSON", func(b *testing.B) {
		for b.Loop() {
			var got store.Lease
			if err := json.Unmarshal(data, &got); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(got); err != nil {
				b.Fatal(err)
			}
		}
	})
}
