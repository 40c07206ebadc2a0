package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// The Faults' parts: each breaks one rule of the contract and nothing
// else, so exactly the check of that rule fails.

// wrongProof serves the endpoint with every Link-Proof one hex digit off.
type wrongProof struct{ h http.Handler }

func (p wrongProof) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != contract.ProofPath {
		p.h.ServeHTTP(w, r) // the upgrade needs the writer's Hijacker
		return
	}
	p.h.ServeHTTP(spoilProof{w}, r)
}

type spoilProof struct{ http.ResponseWriter }

func (s spoilProof) WriteHeader(status int) {
	if p := s.Header().Get(contract.HeaderProof); p != "" {
		b := []byte(p)
		if b[len(b)-1] == '0' {
			b[len(b)-1] = '1'
		} else {
			b[len(b)-1] = '0'
		}
		s.Header().Set(contract.HeaderProof, string(b))
	}
	s.ResponseWriter.WriteHeader(status)
}

// dropTaken never sends _link/taken.
type dropTaken struct{ acp.Framer }

func (d dropTaken) WriteMessage(ctx context.Context, msg []byte) error {
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(msg, &m) == nil && m.Method == contract.MethodTaken {
		return nil
	}
	return d.Framer.WriteMessage(ctx, msg)
}

// acceptBadFrom lets through a session/prompt whose _meta.link's from
// names no sender, as a harness that skips the check would: the from is
// dropped before acp.Serve reads it, and the message reaches the model.
type acceptBadFrom struct{ acp.Framer }

func (a acceptBadFrom) ReadMessage(ctx context.Context) ([]byte, error) {
	b, err := a.Framer.ReadMessage(ctx)
	if err != nil || !bytes.Contains(b, []byte(`"session/prompt"`)) {
		return b, err
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return b, nil
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(m["params"], &params) != nil {
		return b, nil
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(params["_meta"], &meta) != nil {
		return b, nil
	}
	var link map[string]json.RawMessage
	if json.Unmarshal(meta["link"], &link) != nil {
		return b, nil
	}
	var from string
	if json.Unmarshal(link["from"], &from) != nil || contract.CheckFrom(from) == nil {
		return b, nil
	}
	delete(link, "from")
	delete(link, "fromName")
	meta["link"], _ = json.Marshal(link)
	params["_meta"], _ = json.Marshal(meta)
	m["params"], _ = json.Marshal(params)
	out, err := json.Marshal(m)
	if err != nil {
		return b, nil
	}
	return out, nil
}
