package stdioagent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/recovery"
)

// RecoverFile, in the agent's state folder, holds the answers it keeps
// for _link/recover when its caps say threads (as Link Harness does): a
// JSON list of {id, thread, text}.
const RecoverFile = "recover.json"

// kept is the agent's answers kept for _link/recover: recovery's Store
// over RecoverFile.
type kept struct {
	path string
	mu   sync.Mutex
}

func (k *kept) read() []contract.RecoveredAnswer {
	var all []contract.RecoveredAnswer
	if b, err := os.ReadFile(k.path); err == nil {
		json.Unmarshal(b, &all)
	}
	return all
}

func (k *kept) Kept(context.Context) ([]recovery.Answer, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []recovery.Answer
	for _, a := range k.read() {
		out = append(out, recovery.Answer{ID: a.ID, Thread: a.Thread, Text: a.Text})
	}
	return out, nil
}

func (k *kept) Remove(_ context.Context, ids []string) ([]recovery.Answer, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var gone []recovery.Answer
	left := slices.DeleteFunc(k.read(), func(a contract.RecoveredAnswer) bool {
		if slices.Contains(ids, a.ID) {
			gone = append(gone, recovery.Answer{ID: a.ID, Thread: a.Thread, Text: a.Text})
			return true
		}
		return false
	})
	b, err := json.Marshal(left)
	if err == nil {
		err = os.WriteFile(k.path, b, 0o600)
	}
	return gone, err
}

// HandleExtensionMethod answers _link/recover, with threads among its
// caps, by recovery's rules over RecoverFile.
func (a *agent) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != contract.MethodRecover || !a.caps["threads"] {
		return nil, sdk.NewMethodNotFound(method)
	}
	p, err := contract.ParseRecoverParams(params)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if a.recover == nil {
		a.recover = &recovery.Ledger{Store: &kept{path: filepath.Join(a.state, RecoverFile)}}
	}
	l := a.recover
	a.mu.Unlock()
	a.log("recover")
	return l.Recover(ctx, p, nil)
}
