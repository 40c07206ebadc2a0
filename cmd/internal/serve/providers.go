package serve

import (
	"errors"
	"fmt"
	"sync"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/anthropic"
	"github.com/lnk-dev/link/model/openai"
	"github.com/lnk-dev/link/model/scripted"
)

// Providers routes a model's name to the provider that serves it, and
// makes each provider once per route: the offline model for "offline",
// and for a name no provider in the environment serves, saying which key
// to set; Anthropic's Messages API (model/anthropic); OpenAI's,
// OpenRouter's and Ollama's Chat Completions (model/openai).
type Providers struct {
	env map[string]string

	mu   sync.Mutex
	made map[model.Route]model.Provider
}

// offlineRoute is the route of the offline model.
const offlineRoute = scripted.OfflineName

// NewProviders routes by env, the environment holding the providers'
// keys and addresses.
func NewProviders(env map[string]string) *Providers {
	return &Providers{env: env, made: map[model.Route]model.Provider{}}
}

// Route says which provider serves name.
func (p *Providers) Route(name string) (model.Route, error) {
	if name == scripted.OfflineName {
		return model.Route{Provider: offlineRoute, APIModel: name}, nil
	}
	r, err := model.Resolve(name, p.env)
	if errors.Is(err, model.ErrNoProvider) {
		// Answered by the offline model, which says what to set.
		return model.Route{Provider: offlineRoute, APIModel: name}, nil
	}
	return r, err
}

// Serves says whether a provider in the environment serves name (the
// offline model serves its own name): nil when one does, else the
// error saying which key to set. Route gives every name a route, the
// offline model answering one nothing serves; a name a message sets is
// held to Serves, so it is refused rather than kept (harness.Config.Serves).
func (p *Providers) Serves(name string) error {
	if name == scripted.OfflineName {
		return nil
	}
	_, err := model.Resolve(name, p.env)
	return err
}

// Provider gives the provider of r, made once per route.
func (p *Providers) Provider(r model.Route) (model.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr := p.made[r]; pr != nil {
		return pr, nil
	}
	var pr model.Provider
	switch r.Provider {
	case offlineRoute:
		o := scripted.Offline{}
		if r.APIModel != scripted.OfflineName {
			if _, err := model.Resolve(r.APIModel, p.env); err != nil {
				o.Why = err.Error()
			}
		}
		pr = o
	case model.ProviderAnthropic:
		a, err := anthropic.New(r, anthropic.Options{APIKey: p.env[r.KeyEnv]})
		if err != nil {
			return nil, err
		}
		pr = a
	case model.ProviderOpenAI, model.ProviderOpenRouter, model.ProviderOllama:
		o, err := openai.New(r, openai.Options{APIKey: p.env[r.KeyEnv], Headers: openRouterHeaders(r)})
		if err != nil {
			return nil, err
		}
		pr = o
	default:
		return nil, fmt.Errorf("no provider %q in lnk-link-harness", r.Provider)
	}
	p.made[r] = pr
	return pr, nil
}

// openRouterHeaders name the app to OpenRouter, as it asks.
func openRouterHeaders(r model.Route) map[string]string {
	if r.Provider != model.ProviderOpenRouter {
		return nil
	}
	return map[string]string{"HTTP-Referer": "https://github.com/lnk-dev/link", "X-Title": "Link"}
}
