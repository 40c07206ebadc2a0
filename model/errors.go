package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Errors a Provider's call may wrap, tested with errors.Is.
var (
	// ErrPromptTooLong: the provider refused the prompt as longer than the
	// model's window. No provider has a common code for it, so it is told
	// by the message (ClassifyError).
	ErrPromptTooLong = errors.New("prompt too long")
	// ErrAuth: the provider refused the key (401 or 403).
	ErrAuth = errors.New("key refused")
)

// Error is a provider's refusal of a call: its HTTP status (0 for an error
// sent inside a stream) and the message it gave.
type Error struct {
	Status  int
	Message string
	kind    error
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return "provider: " + e.Message
	}
	return fmt.Sprintf("provider: %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// Unwrap gives the sentinel the error was recognized as, if any.
func (e *Error) Unwrap() error { return e.kind }

// Retryable says whether the same call may succeed if sent again later:
// rate limits (429), overload (529) and the provider's own failures (5xx).
func (e *Error) Retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// tooLong are the words by which each kind of provider says a prompt is
// longer than the window: Anthropic's, OpenAI's and OpenRouter's, and a
// runtime's (Ollama, llama.cpp, LM Studio, vLLM).
var tooLong = []string{
	"prompt is too long",
	"context length",
	"context_length",
	"context window",
	"context size",
}

// ClassifyError makes a provider's error answer an *Error: status is the
// HTTP status (0 for an error event inside a stream) and body what the
// provider sent, its JSON error shape or plain text. The message is taken
// from the shapes providers use ({"error":{"message":...}},
// {"error":"..."}, {"message":...}), else the body itself. A message that
// says the prompt is longer than the window wraps ErrPromptTooLong, and a
// 401 or 403 wraps ErrAuth.
func ClassifyError(status int, body string) error {
	msg := errorMessage(body)
	e := &Error{Status: status, Message: msg}
	low := strings.ToLower(msg + " " + body)
	for _, w := range tooLong {
		if strings.Contains(low, w) {
			e.kind = ErrPromptTooLong
			return e
		}
	}
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		e.kind = ErrAuth
	}
	return e
}

// errorMessage finds the message in an error body.
func errorMessage(body string) string {
	body = strings.TrimSpace(body)
	var shape struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal([]byte(body), &shape) == nil {
		var inner struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		var s string
		switch {
		case json.Unmarshal(shape.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(shape.Error, &s) == nil && s != "":
			return s
		case shape.Message != "":
			return shape.Message
		case shape.Detail != "":
			return shape.Detail
		}
	}
	if len(body) > 2048 {
		body = body[:2048] + "..."
	}
	if body == "" {
		return "no message"
	}
	return body
}

// Refusal is the error a provider's refusal res says (its status ≥ 300),
// classified as ClassifyError does from its first MiB of body, which it
// reads and closes; the context's error when the read ended with ctx.
func Refusal(ctx context.Context, res *http.Response) error {
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return ClassifyError(res.StatusCode, string(body))
}
