package bridge

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// FuzzDecode: whatever a proved request holds, decode refuses it as a bad
// request or gives a call whose arguments are each within their rules.
func FuzzDecode(f *testing.F) {
	line := `{"seq":1,"time":"2026-11-30T09:00:00Z","kind":"message","text":"hi"}` + "\n"
	for _, s := range []struct{ method, uri, body string }{
		{"POST", "/v1/append?thread=telegram%3A42", line},
		{"POST", "/v1/append?thread=default", `{"seq":0,"kind":"message"}` + "\n"},
		{"POST", "/v1/append?thread=default", line + line},
		{"POST", "/v1/append?thread=default&thread=link:a", line},
		{"GET", "/v1/read?thread=default&from=1", ""},
		{"GET", "/v1/read?thread=default&from=-1", ""},
		{"GET", "/v1/latest?thread=slack:C0123ABC.1700000000.000100&n=32", ""},
		{"GET", "/v1/latest?thread=default&n=99999999999999999999", ""},
		{"POST", "/v1/lease?thread=default&holder=h1&ttl=60000000000", ""},
		{"POST", "/v1/lease?thread=default&holder=&ttl=1", ""},
		{"POST", "/v1/release?thread=default&holder=h%00", ""},
		{"GET", "/v1/ping", ""},
		{"GET", "/v1/ping?x=1", ""},
		{"GET", "/v1/../v1/ping", ""},
		{"DELETE", "/v1/read?thread=default&from=1", ""},
		{"GET", "*", ""},
		{"GET", "/v1/read?thread=..%2Fescape&from=1", ""},
		{"GET", "/v1/read?%zz", ""},
		{"GET", "/v1/tools?thread=link%3Atask-1", ""},
		{"GET", "/v1/tools?thread=default", "[]"},
		{"POST", "/v1/narrow?thread=default", `["files__read","web__fetch"]`},
		{"POST", "/v1/narrow?thread=default", "[]"},
		{"POST", "/v1/narrow?thread=default", "null"},
		{"POST", "/v1/narrow?thread=default", `["not a name"]`},
		{"POST", "/v1/narrow?thread=default", `["a"] ["b"]`},
		{"POST", "/v1/narrow?thread=default", ""},
	} {
		f.Add(s.method, s.uri, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, uri string, body []byte) {
		c, err := decode(method, uri, body)
		if err != nil {
			if !errors.Is(err, errBadRequest) {
				t.Fatalf("refusal not a bad request: %v", err)
			}
			if code, status := errorCode(err); code != codeBadRequest || status != http.StatusBadRequest {
				t.Fatalf("refusal maps to %s %d", code, status)
			}
			return
		}
		if c.path == pathPing {
			return
		}
		if err := contract.CheckThread(c.thread); err != nil {
			t.Fatalf("decoded thread %q the contract refuses: %v", c.thread, err)
		}
		switch c.path {
		case pathAppend:
			if c.event.Seq < 1 || c.event.Kind == "" {
				t.Fatalf("decoded event #%d of kind %q", c.event.Seq, c.event.Kind)
			}
			// What decodes encodes, and reads back the same.
			l, err := store.MarshalLine(c.event)
			if err != nil {
				t.Fatal(err)
			}
			again, err := store.ParseLine(l)
			if err != nil {
				t.Fatalf("an event decoded doesn't read back: %v", err)
			}
			if same, err := sameLine(again, c.event); err != nil || !same {
				t.Fatalf("an event decoded reads back otherwise: %v", err)
			}
		case pathRead:
			if c.from < 0 {
				t.Fatalf("from %d", c.from)
			}
		case pathLatest:
			if c.n < 0 || c.n > maxLatest {
				t.Fatalf("n %d", c.n)
			}
		case pathTools:
		case pathNarrow:
			if c.tools == nil {
				t.Fatal("a narrow decoded with no list")
			}
			if err := store.CheckTools(c.tools); err != nil {
				t.Fatalf("a narrow decoded with a list the contract refuses: %v", err)
			}
		case pathLease, pathRelease:
			if c.holder == "" || len(c.holder) > maxHolder {
				t.Fatalf("holder %q", c.holder)
			}
			if c.path == pathLease && (c.ttl <= 0 || c.ttl > maxTTL) {
				t.Fatalf("ttl %v", c.ttl)
			}
		default:
			t.Fatalf("decoded a call to %q", c.path)
		}
		if c.path != pathAppend && c.path != pathNarrow && len(body) > 0 {
			t.Fatalf("%s decoded with a body", c.path)
		}
	})
}

// FuzzVerify: whatever headers a request carries, only the key's proof
// of the very call passes, and only once.
func FuzzVerify(f *testing.F) {
	key := []byte("k3y")
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	millis := "1796029200000" // now
	nonce := strings.Repeat("0f", 16)
	good := Proof(key, millis, nonce, "GET", "/v1/ping", nil)
	f.Add(millis, nonce, good, "GET", "/v1/ping", []byte(nil))
	f.Add(millis, nonce, strings.ToUpper(good), "GET", "/v1/ping", []byte(nil))
	f.Add("-1", nonce, good, "GET", "/v1/ping", []byte(nil))
	f.Add("99999999999999999999", nonce, good, "GET", "/v1/ping", []byte(nil))
	f.Add(millis, "", good, "GET", "/v1/ping", []byte("x"))
	f.Add(millis, nonce, "", "POST", "/v1/ping", []byte(nil))
	f.Fuzz(func(t *testing.T, millis, nonce, proof, method, uri string, body []byte) {
		v := newVerifier(key, func() time.Time { return now }, MaxSkew)
		h := http.Header{}
		h.Set(headerTime, millis)
		h.Set(headerNonce, nonce)
		h.Set(headerProof, proof)
		if !v.verify(h, method, uri, body) {
			return
		}
		// Passed: so it is the key's proof of exactly these, in time.
		if want := Proof(key, h.Get(headerTime), h.Get(headerNonce), method, uri, body); proof != want {
			t.Fatalf("passed proof %q, the key's is %q", proof, want)
		}
		if v.verify(h, method, uri, body) {
			t.Fatal("the same proof passed twice")
		}
	})
}

// FuzzReadsWire: a Link-Store-Wire header reads as wire 2 or later only
// when it is a decimal number of 2 or more; anything else is a first
// wire's client.
func FuzzReadsWire(f *testing.F) {
	for _, s := range []string{"", "1", "2", "3", "02", "+2", "-2", "2 ", "two", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{}
		h.Set(headerWire, v)
		if !readsWire2(h) {
			return
		}
		n, err := strconv.Atoi(strings.TrimSpace(h.Get(headerWire)))
		if err != nil || n < 2 {
			t.Fatalf("%q read as wire 2 or later", v)
		}
	})
}
