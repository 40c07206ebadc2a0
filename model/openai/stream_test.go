package openai

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
	p, err := New(model.Route{}, Options{BaseURL: modeltest.StreamServer(t, body) + "/v1", Name: "compatible"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const streamStart = "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n"

// An error inside the stream ends the call with it, as a *model.Error of
// status 0; a broken stream is refused naming what broke; [DONE] ends it.
func TestStreamErrors(t *testing.T) {
	req := modeltest.Ask("m", "hi")
	var c modeltest.Collect
	_, err := rawStream(t, streamStart+"data: {\"error\":{\"message\":\"This model's maximum context length is 8192 tokens\",\"code\":\"context_length_exceeded\"}}\n\n").Stream(t.Context(), req, c.On)
	var perr *model.Error
	if !errors.As(err, &perr) || perr.Status != 0 || !errors.Is(err, model.ErrPromptTooLong) || strings.Join(c.Text, "") != "Hel" {
		t.Errorf("an error chunk: %v after %q", err, c.Text)
	}
	for name, body := range map[string]string{
		"a call out of order": streamStart + "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"name\":\"a\"}}]}}]}\n\n",
		"not JSON":            streamStart + "data: {\"choices\":\n\n",
		"no chunk":            "data: [DONE]\n\n",
	} {
		if _, err := rawStream(t, body).Stream(t.Context(), req, modeltest.Ignore); err == nil {
			t.Errorf("%s: answered", name)
		}
	}
	resp, err := rawStream(t, streamStart+"data: [DONE]\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"after the end\"}}]}\n\n").Stream(t.Context(), req, modeltest.Ignore)
	if err != nil || resp.Text != "Hel" || resp.ID != "c1" {
		t.Errorf("[DONE]: %+v, %v", resp, err)
	}
}
