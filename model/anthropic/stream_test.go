package anthropic

import (
	"errors"
	"strings"
	"testing"

	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/modeltest"
)

// rawStream is a provider whose server streams body as it is.
func rawStream(t *testing.T, body string) *Provider {
	t.Helper()
	p, err := New(model.Route{Provider: model.ProviderAnthropic, BaseURL: modeltest.StreamServer(t, body)}, Options{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const streamStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n"

// An error inside the stream ends the call with it, as a *model.Error of
// status 0, with or without its event: line; a broken stream is refused
// naming what broke.
func TestStreamErrors(t *testing.T) {
	req := modeltest.Ask(testModel, "hi")
	for _, tc := range []struct{ name, body, want string }{
		{"error event", streamStart + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", "Overloaded"},
		{"error data alone", streamStart + "data: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"prompt is too long\"}}\n\n", "prompt is too long"},
	} {
		var c modeltest.Collect
		_, err := rawStream(t, tc.body).Stream(t.Context(), req, c.On)
		var perr *model.Error
		if !errors.As(err, &perr) || perr.Status != 0 || perr.Message != tc.want || strings.Join(c.Text, "") != "Hel" {
			t.Errorf("%s: %v after %q", tc.name, err, c.Text)
		}
	}
	if _, err := rawStream(t, streamStart+"data: {\"type\":\"error\",\"error\":{\"message\":\"prompt is too long\"}}\n\n").Stream(t.Context(), req, modeltest.Ignore); !errors.Is(err, model.ErrPromptTooLong) {
		t.Errorf("too long in the stream: %v", err)
	}
	for name, body := range map[string]string{
		"a block out of order": streamStart + "data: {\"type\":\"content_block_start\",\"index\":5,\"content_block\":{\"type\":\"text\"}}\n\n",
		"a delta for no block": "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
		"not JSON":             streamStart + "data: {\"type\":\n\n",
		"no message":           ": nothing\n\n",
	} {
		if _, err := rawStream(t, body).Stream(t.Context(), req, modeltest.Ignore); err == nil {
			t.Errorf("%s: answered", name)
		}
	}
}
