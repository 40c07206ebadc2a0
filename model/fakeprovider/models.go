package fakeprovider

import (
	"net/http"
	"time"
)

// modelsAPI is GET /v1/models, in Anthropic's shape for a client that sends
// Anthropic's headers (anthropic-version, x-api-key) and in OpenAI's for
// any other.
type modelsAPI struct {
	s         *Server
	anthropic bool
}

func (a *modelsAPI) decode(*Request) {}

func (a *modelsAPI) auth(r *http.Request) string {
	a.anthropic = r.Header.Get("Anthropic-Version") != "" || r.Header.Get("X-Api-Key") != ""
	if a.anthropic {
		return (&anthropicAPI{s: a.s}).auth(r)
	}
	return openAIAuth(r)
}

func (a *modelsAPI) fail(w http.ResponseWriter, status int, msg string) {
	if a.anthropic {
		(&anthropicAPI{s: a.s}).fail(w, status, msg)
		return
	}
	openAIFail(w, status, msg)
}

func (a *modelsAPI) serve(st *stream, _ *Request) {
	ms := a.s.modelList()
	data := make([]any, 0, len(ms))
	created := time.Now()
	for _, m := range ms {
		if a.anthropic {
			data = append(data, obj{"type": "model", "id": m.Name, "display_name": m.Name, "created_at": created.UTC().Format(time.RFC3339)})
		} else {
			data = append(data, obj{"id": m.Name, "object": "model", "created": created.Unix(), "owned_by": "fakeprovider"})
		}
	}
	if a.anthropic {
		writeJSON(st.w, http.StatusOK, obj{"data": data, "has_more": false, "first_id": ms[0].Name, "last_id": ms[len(ms)-1].Name})
		return
	}
	writeJSON(st.w, http.StatusOK, obj{"object": "list", "data": data})
}
