package bridge

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ProofLabel starts what a call's proof is computed over.
const ProofLabel = "link store bridge"

// nonceLen is a nonce's length in hex characters.
const nonceLen = 32

// Proof is a call's Link-Store-Proof: lowercase hex of the HMAC-SHA256,
// keyed with the agent's key, of ProofLabel, the call's time (unix
// milliseconds, decimal), its nonce, its method, its request URI (path and
// query as sent) and its body, each of the first five followed by one zero
// byte. None of the first five holds a zero byte, so no two calls share
// what is signed.
func Proof(key []byte, millis, nonce, method, uri string, body []byte) string {
	return hex.EncodeToString(proofSum(key, millis, nonce, method, uri, body))
}

func proofSum(key []byte, millis, nonce, method, uri string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, s := range []string{ProofLabel, millis, nonce, method, uri} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	m.Write(body)
	return m.Sum(nil)
}

// sign sets req's proof headers for body, at now.
func sign(req *http.Request, key, body []byte, now time.Time) {
	var b [nonceLen / 2]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	nonce := hex.EncodeToString(b[:])
	millis := strconv.FormatInt(now.UnixMilli(), 10)
	req.Header.Set(headerTime, millis)
	req.Header.Set(headerNonce, nonce)
	req.Header.Set(headerProof, Proof(key, millis, nonce, req.Method, req.URL.RequestURI(), body))
}

// verifier checks calls' proofs, and remembers the proofs it passed for
// as long as their time is within the skew, so none passes twice.
type verifier struct {
	key  []byte
	now  func() time.Time
	skew time.Duration

	mu   sync.Mutex
	seen map[[sha256.Size]byte]struct{}
	// order[head:] holds what seen holds, oldest first, each with when
	// it may be forgotten: its time can no longer be within the skew.
	order []seenProof
	head  int
}

type seenProof struct {
	sum    [sha256.Size]byte
	forget time.Time
}

func newVerifier(key []byte, now func() time.Time, skew time.Duration) *verifier {
	return &verifier{key: key, now: now, skew: skew, seen: map[[sha256.Size]byte]struct{}{}}
}

// verify says whether the call's headers prove it, for method, uri and
// body, and that it was not seen before. It says nothing of why not.
func (v *verifier) verify(h http.Header, method, uri string, body []byte) bool {
	millis, nonce, proof := h.Get(headerTime), h.Get(headerNonce), h.Get(headerProof)
	if !isDigits(millis, 1, 19) || !isLowerHex(nonce, nonceLen) || !isLowerHex(proof, 2*sha256.Size) {
		return false
	}
	got, err := hex.DecodeString(proof)
	if err != nil {
		return false
	}
	if !hmac.Equal(got, proofSum(v.key, millis, nonce, method, uri, body)) {
		return false
	}
	ms, err := strconv.ParseInt(millis, 10, 64)
	if err != nil {
		return false
	}
	now := v.now()
	if d := now.Sub(time.UnixMilli(ms)); d > v.skew || d < -v.skew {
		return false
	}
	var sum [sha256.Size]byte
	copy(sum[:], got)
	return v.remember(sum, now)
}

// remember records sum as seen at now, false if it was seen already. A
// proof passed at now has a time no later than now+skew, so it can pass
// again only until now+2*skew; it is forgotten after. The order is that of
// the server's clock, so the oldest are forgotten first.
func (v *verifier) remember(sum [sha256.Size]byte, now time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for v.head < len(v.order) && now.After(v.order[v.head].forget) {
		delete(v.seen, v.order[v.head].sum)
		v.head++
	}
	if v.head > len(v.order)/2 {
		// Forgotten ones are half: move the rest down, once per as many.
		v.order = append(v.order[:0], v.order[v.head:]...)
		v.head = 0
	}
	if _, ok := v.seen[sum]; ok {
		return false
	}
	v.seen[sum] = struct{}{}
	v.order = append(v.order, seenProof{sum: sum, forget: now.Add(2 * v.skew)})
	return true
}

func isDigits(s string, minLen, maxLen int) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
