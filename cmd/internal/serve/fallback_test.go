package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/fakeprovider"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
)

// config.json's model.fallbacks: with the first model's provider down
// (nothing listens at its address), the turn is answered by the next
// model, through its own provider, sent its own instructions in the
// first's place; the answer's event names the model and provider that
// answered.
func TestFallbackWhenProviderDown(t *testing.T) {
	down := fakeprovider.New()
	downURL := down.URL()
	down.Close()
	up := fakeprovider.New()
	defer up.Close()
	up.Script(fakeprovider.Turn{Text: "Luna answers."})

	home := t.TempDir()
	p, err := store.For(home, contract.DefaultAgent)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		p.Config(): `{"model":{"name":"anthropic/claude-opus-5-5","fallbacks":["openai/gpt-6-luna"]}}`,
		filepath.Join(p.Instructions(), "models", "anthropic", "claude-opus-5-5", "instruction.md"): "Claude's own instructions.",
		filepath.Join(p.Instructions(), "models", "openai", "gpt-6-luna", "instruction.md"):         "Luna's own instructions.",
	}
	for path, text := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	key := []byte("serve-test-key-0123456789")
	env := map[string]string{
		model.EnvAnthropicKey: "ka", model.EnvAnthropicBaseURL: downURL,
		model.EnvOpenAIKey: "ko", model.EnvOpenAIBaseURL: up.URL() + "/v1",
	}
	s, err := Start(t.Context(), Config{Home: home, Key: key, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const thread = "link:fallback"
	sayTo(t, s.URL(), key, thread, "anyone there?", nil)
	events, err := log.Open(p.Chats()).Read(t.Context(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if last.Kind != store.KindAnswer || last.Text != "Luna answers." || last.Provider != model.ProviderOpenAI || !strings.Contains(last.Model, "gpt-6-luna") {
		t.Fatalf("the last event %+v", last)
	}
	reqs := up.Requests()
	if len(reqs) != 1 || reqs[0].Model != "gpt-6-luna" {
		t.Fatalf("the second provider was asked %+v", reqs)
	}
	if sys := reqs[0].System; !strings.Contains(sys, "Luna's own instructions.") || strings.Contains(sys, "Claude's") {
		t.Fatalf("the second model's system prompt:\n%s", sys)
	}
}
