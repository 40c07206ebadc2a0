package contract

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func TestProof(t *testing.T) {
	key := []byte("k3y-of-the-endpoint")
	challenge := strings.Repeat("ab", 16)
	// Computed independently: HMAC-SHA256 over label, zero byte, challenge.
	m := hmac.New(sha256.New, key)
	m.Write([]byte("link endpoint proof\x00" + challenge))
	want := hex.EncodeToString(m.Sum(nil))
	if got := Proof(key, challenge); got != want {
		t.Fatalf("Proof = %s, want %s", got, want)
	}
	if !VerifyProof(key, challenge, want) {
		t.Fatal("VerifyProof refused the right proof")
	}
	for _, bad := range []string{"", strings.ToUpper(want), want[:63], want + "0", Proof([]byte("other"), challenge), Proof(key, challenge+"00")} {
		if VerifyProof(key, challenge, bad) {
			t.Errorf("VerifyProof accepted %q", bad)
		}
	}
}

func TestCheckChallenge(t *testing.T) {
	for _, ok := range []string{strings.Repeat("a", 32), strings.Repeat("F", 128), NewChallenge()} {
		if err := CheckChallenge(ok); err != nil {
			t.Errorf("CheckChallenge(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("a", 31), strings.Repeat("a", 129), strings.Repeat("g", 32), strings.Repeat("a", 31) + " ", strings.Repeat("a", 31) + "\x00"} {
		err := CheckChallenge(bad)
		if err == nil || !strings.Contains(err.Error(), "challenge") {
			t.Errorf("CheckChallenge(%q) = %v, want a refusal naming the challenge", bad, err)
		}
	}
}

func TestKeyMatches(t *testing.T) {
	key := []byte("secret")
	if !KeyMatches(key, "Bearer secret") {
		t.Fatal("right key refused")
	}
	for _, h := range []string{"", "secret", "Bearer ", "Bearer secret ", "bearer secret", "Bearer Secret", "Bearer secret2", "Basic secret"} {
		if KeyMatches(key, h) {
			t.Errorf("KeyMatches(%q) accepted", h)
		}
	}
	if KeyMatches(nil, "Bearer ") {
		t.Error("an empty key matched")
	}
}

func TestParseKey(t *testing.T) {
	for file, want := range map[string]string{"abc\n": "abc", "abc": "abc", "abc\r\n": "abc"} {
		got, err := ParseKey([]byte(file))
		if err != nil || string(got) != want {
			t.Errorf("ParseKey(%q) = %q, %v", file, got, err)
		}
	}
	for _, bad := range []string{"", "\n", "a b", "abc\n\n", "ключ"} {
		if _, err := ParseKey([]byte(bad)); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}

func TestPort(t *testing.T) {
	if p, err := Port(""); err != nil || p != 18800 {
		t.Fatalf("Port(\"\") = %d, %v", p, err)
	}
	if p, err := Port("9000"); err != nil || p != 9000 || EndpointURL(p) != "http://127.0.0.1:9000/acp" {
		t.Fatalf("Port(9000) = %d, %v", p, err)
	}
	for _, bad := range []string{"0", "65536", "x", "-1"} {
		if _, err := Port(bad); err == nil {
			t.Errorf("Port(%q) accepted", bad)
		}
	}
}

func FuzzChallenge(f *testing.F) {
	f.Add(strings.Repeat("a", 32))
	f.Add("zz")
	f.Fuzz(func(t *testing.T, c string) {
		if err := CheckChallenge(c); err == nil {
			if len(c) < 32 || len(c) > 128 || strings.Trim(c, "0123456789abcdefABCDEF") != "" {
				t.Fatalf("accepted %q", c)
			}
			if !VerifyProof([]byte("k"), c, Proof([]byte("k"), c)) {
				t.Fatal("proof of an accepted challenge doesn't verify")
			}
		}
	})
}
