package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/lnk-dev/link/contract"
)

// checkProof asks the proof of challenges of both bounds' lengths, and of
// upper and lower case, each on a connection of its own.
func checkProof(ctx context.Context, k *kit) error {
	fresh := contract.NewChallenge() // 64 lowercase
	for _, c := range []struct{ what, challenge string }{
		{"32 characters", fresh[:32]},
		{"64 characters", fresh},
		{"128 characters", fresh + contract.NewChallenge()},
		{"upper-case hex", strings.ToUpper(fresh)},
	} {
		if err := k.proveOnce(ctx, c.challenge, k.agentHeaders()); err != nil {
			return fmt.Errorf("a challenge of %s: %w", c.what, err)
		}
	}
	return nil
}

// proveOnce asks one proof on a connection of its own and verifies it.
func (k *kit) proveOnce(ctx context.Context, challenge string, h http.Header) error {
	w, err := dialWire(ctx, k.t.URL)
	if err != nil {
		return err
	}
	defer w.Close()
	a, err := w.prove(ctx, challenge, h)
	if err != nil {
		return err
	}
	return k.verify(a, challenge)
}

func checkProofMalformed(ctx context.Context, k *kit) error {
	fresh := contract.NewChallenge()
	for _, c := range []struct{ what, challenge string }{
		{"no challenge", ""},
		{"31 characters", fresh[:31]},
		{"129 characters", fresh + fresh + "a"},
		{"a character that isn't hex", "g" + fresh[1:]},
		{"a space in it", fresh[:32] + " " + fresh[33:]},
	} {
		if err := k.refusedProof(ctx, c.challenge, k.agentHeaders(), http.StatusBadRequest); err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
	}
	return nil
}

// refusedProof asks a proof on a connection of its own and checks it is
// refused with status and no Link-Proof.
func (k *kit) refusedProof(ctx context.Context, challenge string, h http.Header, status int) error {
	w, err := dialWire(ctx, k.t.URL)
	if err != nil {
		return err
	}
	defer w.Close()
	a, err := w.prove(ctx, challenge, h)
	if err != nil {
		return err
	}
	if a.status != status {
		return fmt.Errorf("the proof was answered %d (%s), not %d", a.status, quoteBody(a.body), status)
	}
	if p := a.header.Get(contract.HeaderProof); p != "" {
		return fmt.Errorf("refused %d, yet with Link-Proof %q", status, truncate(p, 80))
	}
	return nil
}

// checkNoDelay reads TCP_NODELAY from the server's own socket of a proved
// connection, once the proof is answered and again once the connection
// is a message's WebSocket.
func checkNoDelay(ctx context.Context, k *kit) error {
	w, err := k.proved(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	if err := k.readNoDelay(w, "once the proof was answered"); err != nil {
		return err
	}
	r, _, err := w.upgrade(ctx, k.messageHeaders())
	if err != nil {
		return err
	}
	defer r.Close()
	if err := k.begin(ctx, r, k.thread("tcp-nodelay", 0)); err != nil {
		return err
	}
	return k.readNoDelay(w, "once upgraded to the message's WebSocket")
}

func (k *kit) readNoDelay(w *wire, when string) error {
	client, server := w.addrs()
	on, err := ReadNoDelay(k.t.PID, server, client)
	if err != nil {
		return skip("the system didn't say TCP_NODELAY of process %d's socket %s -> %s: %v", k.t.PID, server, client, err)
	}
	if !on {
		return fmt.Errorf("TCP_NODELAY is off on process %d's socket %s -> %s %s: a short answer waits ~40 ms for the delayed ACK", k.t.PID, server, client, when)
	}
	return nil
}

// checkKey upgrades proved connections with the key missing, wrong, or
// said otherwise than as a bearer token, and checks each is refused with
// nothing else said: no WebSocket, no JSON-RPC, not the key.
func checkKey(ctx context.Context, k *kit) error {
	wrong := bytes.Clone(k.t.Key)
	wrong[len(wrong)-1] ^= 1
	if wrong[len(wrong)-1] < 0x21 || wrong[len(wrong)-1] > 0x7e {
		wrong[len(wrong)-1] = 'x'
	}
	bearer := func(v string) http.Header {
		h := k.agentHeaders()
		h.Set(contract.HeaderAuthorization, v)
		return h
	}
	for _, c := range []struct {
		what string
		h    http.Header
	}{
		{"no Authorization", k.agentHeaders()},
		{"a wrong key", bearer(contract.BearerPrefix + string(wrong))},
		{"the key and more", bearer(contract.BearerPrefix + string(k.t.Key) + "0")},
		{"the key without Bearer", bearer(string(k.t.Key))},
		{"an empty bearer token", bearer(contract.BearerPrefix)},
	} {
		if err := k.refusedUpgrade(ctx, c.h, http.StatusUnauthorized, http.StatusForbidden); err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
	}
	return nil
}

// refusedUpgrade proves a connection as the target's agent, then asks its
// upgrade with h, and checks it is refused with one of statuses and
// nothing else said.
func (k *kit) refusedUpgrade(ctx context.Context, h http.Header, statuses ...int) error {
	w, err := k.proved(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	r, a, err := w.upgrade(ctx, h)
	if err == nil {
		r.Close()
		return errors.New("the connection was upgraded to a message's WebSocket")
	}
	if !errors.Is(err, errRefused) {
		return err
	}
	ok := false
	for _, s := range statuses {
		ok = ok || a.status == s
	}
	if !ok {
		return fmt.Errorf("refused %d (%s), not %s", a.status, quoteBody(a.body), statusList(statuses))
	}
	if bytes.Contains(a.body, k.t.Key) {
		return fmt.Errorf("refused %d, and the refusal says the key", a.status)
	}
	if bytes.Contains(a.body, []byte("jsonrpc")) {
		return fmt.Errorf("refused %d, and the refusal says JSON-RPC: %s", a.status, quoteBody(a.body))
	}
	return nil
}

func statusList(statuses []int) string {
	parts := make([]string, len(statuses))
	for i, s := range statuses {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, " or ")
}
