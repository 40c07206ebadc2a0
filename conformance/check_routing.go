package conformance

import (
	"context"
	"fmt"
	"net/http"

	"github.com/lnk-dev/link/contract"
)

// nobody is an agent's name no endpoint runs: the kit's own, of this run.
func (k *kit) nobody() string { return "conformance-nobody-" + k.run }

// checkRoutingName names an agent the endpoint doesn't run, at the proof
// and at the upgrade of a proved connection.
func checkRoutingName(ctx context.Context, k *kit) error {
	if err := k.refusedProof(ctx, contract.NewChallenge(), headers(nil, k.nobody(), ""), http.StatusNotFound); err != nil {
		return fmt.Errorf("the proof naming %s: %w", k.nobody(), err)
	}
	if err := k.refusedUpgrade(ctx, headers(k.t.Key, k.nobody(), ""), http.StatusNotFound); err != nil {
		return fmt.Errorf("the upgrade naming %s: %w", k.nobody(), err)
	}
	return nil
}

// checkRoutingDefault names no agent: the proof is answered, and a
// message with the target agent's key is answered.
func checkRoutingDefault(ctx context.Context, k *kit) error {
	if err := k.proofOnce(ctx, http.Header{}); err != nil {
		return fmt.Errorf("the proof naming no agent: %w", err)
	}
	nameless := *k
	nameless.t.Agent, nameless.t.AgentID = "", ""
	e, err := nameless.message(ctx, k.thread("routing-default", 0), "conformance: a message naming no agent", nil)
	if err != nil {
		return fmt.Errorf("a message naming no agent: %w", err)
	}
	if err := e.answered(); err != nil {
		return fmt.Errorf("a message naming no agent: %w", err)
	}
	return nil
}

// checkRoutingID names the agent by its name and ID (answered; every
// other check's messages name it so too), then with an ID that isn't its
// own (404), at the proof and at the upgrade.
func checkRoutingID(ctx context.Context, k *kit) error {
	if err := k.proofOnce(ctx, k.agentHeaders()); err != nil {
		return fmt.Errorf("the proof naming %s by its ID %s: %w", k.t.Agent, k.t.AgentID, err)
	}
	other := "conformance-other-" + k.run
	if err := k.refusedProof(ctx, contract.NewChallenge(), headers(nil, k.t.Agent, other), http.StatusNotFound); err != nil {
		return fmt.Errorf("the proof naming %s with ID %s: %w", k.t.Agent, other, err)
	}
	if err := k.refusedUpgrade(ctx, headers(k.t.Key, k.t.Agent, other), http.StatusNotFound); err != nil {
		return fmt.Errorf("the upgrade naming %s with ID %s: %w", k.t.Agent, other, err)
	}
	return nil
}

// checkRoutingShared names a shared agent by name alone.
func checkRoutingShared(ctx context.Context, k *kit) error {
	if err := k.refusedProof(ctx, contract.NewChallenge(), headers(nil, k.t.Shared, ""), http.StatusConflict); err != nil {
		return fmt.Errorf("the proof naming %s alone: %w", k.t.Shared, err)
	}
	if err := k.refusedUpgrade(ctx, headers(k.t.Key, k.t.Shared, ""), http.StatusConflict); err != nil {
		return fmt.Errorf("the upgrade naming %s alone: %w", k.t.Shared, err)
	}
	return nil
}

// proofOnce asks a proof on a connection of its own and requires it
// answered.
func (k *kit) proofOnce(ctx context.Context, h http.Header) error {
	w, err := dialWire(ctx, k.t.URL)
	if err != nil {
		return err
	}
	defer w.Close()
	return k.proofAnswered(ctx, w, h)
}
