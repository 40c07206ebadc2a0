package contract

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// ProofLabel starts what the proof is computed over.
const ProofLabel = "link endpoint proof"

// A challenge is 32 to 128 hex characters.
const (
	MinChallenge = 32
	MaxChallenge = 128
)

// CheckChallenge checks a Link-Challenge header's value.
func CheckChallenge(c string) error {
	if len(c) < MinChallenge || len(c) > MaxChallenge {
		return refuse("challenge", "a challenge is %d to %d hex characters, not %d", MinChallenge, MaxChallenge, len(c))
	}
	for i := 0; i < len(c); i++ {
		if !isHex(c[i]) {
			return refuse("challenge", "a challenge is hex characters only")
		}
	}
	return nil
}

// NewChallenge makes a fresh challenge of 64 hex characters.
func NewChallenge() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// Proof is the Link-Proof for challenge: lowercase hex of the HMAC-SHA256,
// keyed with the endpoint key's bytes as written, of "link endpoint proof",
// one zero byte, and the challenge's text.
func Proof(key []byte, challenge string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(ProofLabel))
	m.Write([]byte{0})
	m.Write([]byte(challenge))
	return hex.EncodeToString(m.Sum(nil))
}

// VerifyProof says, in constant time, whether proof is key's proof of
// challenge. Upper-case hex is not the contract's and doesn't verify.
func VerifyProof(key []byte, challenge, proof string) bool {
	return hmac.Equal([]byte(Proof(key, challenge)), []byte(proof))
}

// KeyMatches says, in constant time, whether an Authorization header's
// value carries key as its bearer token.
func KeyMatches(key []byte, authorization string) bool {
	token, ok := cutPrefix(authorization, BearerPrefix)
	if !ok || len(key) == 0 {
		return false
	}
	// Compare HMACs of both so the comparison's time says nothing of
	// the key's length either.
	return hmac.Equal(digest(key), digest([]byte(token)))
}

func digest(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return s, false
	}
	return s[len(prefix):], true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
