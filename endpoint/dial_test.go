package endpoint

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
)

// impostor answers on a port like an endpoint that doesn't hold the key:
// it answers the first request with answer(challenge) and records every
// byte the client sends until the client closes.
func impostor(t *testing.T, answer func(challenge string) string) (url string, heard chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	heard = make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		var rec bytes.Buffer
		br := bufio.NewReader(io.TeeReader(c, &rec))
		req, err := http.ReadRequest(br)
		if err != nil {
			heard <- rec.Bytes()
			return
		}
		io.WriteString(c, answer(req.Header.Get(contract.HeaderChallenge)))
		// A request after the proof's (the upgrade) is heard whole and
		// never answered: the connection closed under it. Else whatever
		// comes is heard until the client closes.
		if _, err := http.ReadRequest(br); err == nil {
			heard <- rec.Bytes()
			return
		}
		io.Copy(io.Discard, br)
		heard <- rec.Bytes()
	}()
	return "http://" + ln.Addr().String() + "/acp", heard
}

// TestDialWrongProof: to an endpoint whose proof is wrong or missing, Dial
// fails with ErrBadProof and sends nothing but the proof request: no key,
// no upgrade.
func TestDialWrongProof(t *testing.T) {
	key := []byte("the-real-key")
	for name, answer := range map[string]func(string) string{
		"wrong key": func(ch string) string {
			return "HTTP/1.1 200 OK\r\nLink-Proof: " + contract.Proof([]byte("another-key"), ch) + "\r\nContent-Length: 0\r\n\r\n"
		},
		"no proof": func(string) string { return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" },
		"upper-case proof": func(ch string) string {
			return "HTTP/1.1 200 OK\r\nLink-Proof: " + strings.ToUpper(contract.Proof(key, ch)) + "\r\nContent-Length: 0\r\n\r\n"
		},
		"another challenge's proof": func(string) string {
			return "HTTP/1.1 200 OK\r\nLink-Proof: " + contract.Proof(key, strings.Repeat("0", 64)) + "\r\nContent-Length: 0\r\n\r\n"
		},
	} {
		t.Run(name, func(t *testing.T) {
			url, heard := impostor(t, answer)
			_, err := Dial(testCtx(t), DialOptions{URL: url, Key: key, Agent: "main"})
			var de *DialError
			if !errors.Is(err, ErrBadProof) || !errors.As(err, &de) || de.Step != StepProof {
				t.Fatalf("dial: %v, want ErrBadProof at the proof", err)
			}
			got := <-heard
			if bytes.Contains(got, key) || bytes.Contains(bytes.ToLower(got), []byte("authorization")) || bytes.Contains(got, []byte("Upgrade")) {
				t.Errorf("the impostor heard more than the proof request:\n%s", got)
			}
			if !bytes.HasPrefix(got, []byte("GET "+contract.ProofPath+" ")) || bytes.Count(got, []byte("HTTP/1.1")) != 1 {
				t.Errorf("the impostor heard %q, want the one proof request", got)
			}
		})
	}
}

// TestDialProofRightOnImpostor: the recorder itself is sound: with the
// right proof, the key does follow on the same connection.
func TestDialProofRightOnImpostor(t *testing.T) {
	key := []byte("the-real-key")
	url, heard := impostor(t, func(ch string) string {
		return "HTTP/1.1 200 OK\r\nLink-Proof: " + contract.Proof(key, ch) + "\r\nContent-Length: 0\r\n\r\n"
	})
	Dial(testCtx(t), DialOptions{URL: url, Key: key}) // the impostor closes the connection under the upgrade
	got := <-heard
	if !bytes.Contains(got, []byte("Authorization: Bearer the-real-key")) {
		t.Errorf("after a right proof the key was not sent on the proved connection:\n%s", got)
	}
}

// TestDialClosedAfterProof: an endpoint that closes the proved connection
// gets no upgrade on another one.
func TestDialClosedAfterProof(t *testing.T) {
	key := []byte("k")
	url, heard := impostor(t, func(ch string) string {
		return "HTTP/1.1 200 OK\r\nLink-Proof: " + contract.Proof(key, ch) + "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
	})
	_, err := Dial(testCtx(t), DialOptions{URL: url, Key: key})
	if !errors.Is(err, ErrConnReused) {
		t.Errorf("dial: %v, want ErrConnReused", err)
	}
	if got := <-heard; bytes.Contains(got, key) && bytes.Contains(got, []byte("Bearer")) {
		t.Errorf("the key went out: %s", got)
	}
}

func TestDialURL(t *testing.T) {
	for _, u := range []string{"", "https://127.0.0.1:1/acp", "http://127.0.0.1/acp", "ftp://x:1", "http://[::1"} {
		_, err := Dial(testCtx(t), DialOptions{URL: u, Key: []byte("k")})
		var de *DialError
		if !errors.As(err, &de) || de.Step != StepConnect {
			t.Errorf("dial %q: %v, want a connect error", u, err)
		}
	}
	if _, err := Dial(testCtx(t), DialOptions{URL: "http://127.0.0.1:1/acp"}); err == nil || !strings.Contains(err.Error(), "no endpoint key") {
		t.Errorf("dial without a key: %v", err)
	}
}

// TestDialAnswerBounded: an endpoint whose answer's headers never end is
// read maxAnswersBytes at most, and the dial fails at the proof then,
// not when its context ends.
func TestDialAnswerBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		for { // until the client closes
			if _, err := io.WriteString(c, "X-More: headers\r\n"); err != nil {
				return
			}
		}
	}()
	_, err = Dial(testCtx(t), DialOptions{URL: "http://" + ln.Addr().String() + "/acp", Key: []byte("k")})
	var de *DialError
	if !errors.As(err, &de) || de.Step != StepProof || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("dial: %v, want a failure at the proof, past the bound", err)
	}
}

// TestDialFrameWithUpgrade: a frame the endpoint sends in the same write
// as its 101 is read, not lost in the reader of the answers.
func TestDialFrameWithUpgrade(t *testing.T) {
	key := []byte("k")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nLink-Proof: "+contract.Proof(key, req.Header.Get(contract.HeaderChallenge))+"\r\nContent-Length: 0\r\n\r\n")
		if req, err = http.ReadRequest(br); err != nil {
			return
		}
		sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		msg := `{"jsonrpc":"2.0","method":"hello"}`
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "+
			base64.StdEncoding.EncodeToString(sum[:])+"\r\n\r\n\x81"+string(rune(len(msg)))+msg)
		io.Copy(io.Discard, br)
	}()
	ctx := testCtx(t)
	conn, err := Dial(ctx, DialOptions{URL: "http://" + ln.Addr().String() + "/acp", Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	got, err := conn.ReadMessage(ctx)
	if err != nil || string(got) != `{"jsonrpc":"2.0","method":"hello"}` {
		t.Fatalf("read %q, %v; want the frame sent with the 101", got, err)
	}
}
