package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
)

// keepConfig keeps session's config options from raw, an answer or an
// update holding configOptions (session/new, resume, load,
// set_config_option, config_option_update); one holding none keeps
// those known.
func (h *harness) keepConfig(session string, raw json.RawMessage) {
	var r struct {
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	if json.Unmarshal(raw, &r) != nil || len(r.ConfigOptions) == 0 || string(r.ConfigOptions) == "null" {
		return
	}
	h.mu.Lock()
	h.configs[session] = r.ConfigOptions
	h.mu.Unlock()
}

// modelOption is a session's config option of category model, the
// agent's model picker: its id, its current value, and the values it
// offers with their names.
type modelOption struct {
	id      string
	current string
	values  []modelValue
}

type modelValue struct{ value, name string }

// modelOptionOf is session's model picker, ok false when the agent
// offered it none.
func (h *harness) modelOptionOf(session string) (o modelOption, ok bool) {
	h.mu.Lock()
	raw := h.configs[session]
	h.mu.Unlock()
	var opts []struct {
		ID       string            `json:"id"`
		Category string            `json:"category"`
		Type     string            `json:"type"`
		Current  json.RawMessage   `json:"currentValue"`
		Options  []json.RawMessage `json:"options"`
	}
	if json.Unmarshal(raw, &opts) != nil {
		return o, false
	}
	for _, c := range opts {
		if c.Category != "model" || c.Type != "select" || c.ID == "" {
			continue
		}
		o = modelOption{id: c.ID}
		json.Unmarshal(c.Current, &o.current)
		for _, raw := range c.Options { // a value, or a group of them
			var v struct {
				Value   string `json:"value"`
				Name    string `json:"name"`
				Options []struct {
					Value string `json:"value"`
					Name  string `json:"name"`
				} `json:"options"`
			}
			if json.Unmarshal(raw, &v) != nil {
				continue
			}
			if v.Value != "" {
				o.values = append(o.values, modelValue{v.Value, v.Name})
			}
			for _, g := range v.Options {
				if g.Value != "" {
					o.values = append(o.values, modelValue{g.Value, g.Name})
				}
			}
		}
		return o, true
	}
	return o, false
}

// match is the value of o that model names: a value itself, a value
// after a provider's prefix (openai/gpt-5.4), or a value's name, its
// case aside.
func (o modelOption) match(model string) (string, bool) {
	_, bare, prefixed := strings.Cut(model, "/")
	for _, v := range o.values {
		if v.value == model || prefixed && v.value == bare {
			return v.value, true
		}
	}
	for _, v := range o.values {
		if v.name != "" && strings.EqualFold(v.name, model) {
			return v.value, true
		}
	}
	return "", false
}

// maxListedModels bounds the values a refusal lists.
const maxListedModels = 20

// offered lists o's values for a refusal.
func (o modelOption) offered() string {
	var names []string
	for i, v := range o.values {
		if i == maxListedModels {
			names = append(names, fmt.Sprintf("and %d more", len(o.values)-i))
			break
		}
		names = append(names, truncate(v.value, 64))
	}
	return strings.Join(names, ", ")
}

// useModel has session run on model (a prompt's _meta.link.model), or,
// with none, on the model kept for it, through the session's config
// option of category model where the agent offers one: set with
// session/set_config_option when its current value differs, and kept in
// the sessions file so the session goes on with it after a restart. A
// model the picker doesn't offer is refused, naming those it does. A
// harness with no picker, or one whose sessions are Link's threads
// (which reads _meta.link itself), is sent the model in the prompt's
// _meta alone, as it came.
func (h *harness) useModel(ctx context.Context, session, model string) error {
	if h.caps.threads {
		return nil
	}
	o, ok := h.modelOptionOf(session)
	if !ok {
		return nil
	}
	want := h.hb.sessions.model(session)
	if model != "" {
		v, ok := o.match(model)
		if !ok {
			return &contract.RuleError{Field: "_meta.link.model", Rule: fmt.Sprintf("%q is no model this agent offers (%s)", truncate(model, 128), o.offered())}
		}
		want = v
	}
	if want == "" || want == o.current {
		return h.keepModel(session, model, want)
	}
	raw, err := h.call(ctx, acp.MethodSetConfigOption, map[string]string{"sessionId": session, "configId": o.id, "value": want})
	if err != nil {
		return fmt.Errorf("%s of model %q: %w", acp.MethodSetConfigOption, want, h.endedErr(err))
	}
	h.keepConfig(session, raw)
	h.hb.cfg.Logger.Info("set a session's model", "session", session, "model", want)
	return h.keepModel(session, model, want)
}

// keepModel keeps want as session's model in the sessions file when a
// prompt asked for model.
func (h *harness) keepModel(session, model, want string) error {
	if model == "" {
		return nil
	}
	return h.hb.sessions.setModel(session, want)
}
