package fakeprovider

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// Turn is one scripted answer, given to the next request any endpoint
// takes, in the wire format of that endpoint.
type Turn struct {
	// Text is the answer's text, streamed in several chunks.
	Text string
	// Thinking is the answer's thinking, streamed before the text where the
	// format has thinking (Anthropic's thinking block with a signature,
	// the Responses API's reasoning summary, Gemini's thought parts,
	// Ollama's thinking, OpenRouter's reasoning).
	Thinking string
	// ToolCalls are the calls the answer makes, after its text.
	ToolCalls []ToolCall
	// Usage is the provider's count of tokens; zero counts the request's
	// bytes and the answer's, four to a token. Each format reports it its
	// own way: Anthropic's input_tokens leave out the cache's, OpenAI's,
	// Gemini's and Ollama's prompt counts include them.
	Usage Usage
	// CostUSD is reported the way OpenRouter reports it, as usage.cost
	// (Chat Completions' and Responses'); other formats report no cost.
	CostUSD float64
	// StopReason is end_turn, tool_use, max_tokens or refusal, each said in
	// the format's own words; "" is tool_use when there are calls, else
	// end_turn.
	StopReason string
	// Delay is the pause before each chunk of a stream.
	Delay time.Duration
	// Status, when set, answers with that HTTP status and ErrorBody in the
	// format's error shape (ErrorBody sent as it is if it is a JSON
	// object): 400 and "prompt is too long" is Anthropic's refusal.
	Status    int
	ErrorBody string
	// Hang holds the answer (after a stream's headers) until the client
	// goes or the server closes.
	Hang bool
}

// ToolCall is a call a scripted answer makes.
type ToolCall struct {
	// ID is the call's id; "" makes one in the format's own style
	// (toolu_..., call_...).
	ID string
	// Name is the tool's name; NAMESPACE.NAME, as Request.Tools lists a
	// function of a Responses API namespace tool, is sent as that
	// function_call's namespace and name.
	Name  string
	Input string // a JSON object; "" is {}
}

// Usage is a scripted count of tokens: In the prompt's tokens neither read
// from the cache nor written to it, CacheRead and CacheWrite those that
// were, Out the answer's.
type Usage struct {
	In, Out, CacheRead, CacheWrite int64
}

// prompt is every token of the prompt, cached or not, as OpenAI, Gemini
// and Ollama count it.
func (u Usage) prompt() int64 { return u.In + u.CacheRead + u.CacheWrite }

// The stop reasons a Turn names.
const (
	stopEnd       = "end_turn"
	stopToolUse   = "tool_use"
	stopMaxTokens = "max_tokens"
	stopRefusal   = "refusal"
)

// fill gives a turn taken for a request its defaults.
func (t Turn) fill(bodyLen int) Turn {
	if t.StopReason == "" {
		t.StopReason = stopEnd
		if len(t.ToolCalls) > 0 {
			t.StopReason = stopToolUse
		}
	}
	t.ToolCalls = append([]ToolCall(nil), t.ToolCalls...)
	out := len(t.Text) + len(t.Thinking)
	for i := range t.ToolCalls {
		if strings.TrimSpace(t.ToolCalls[i].Input) == "" {
			t.ToolCalls[i].Input = "{}"
		}
		out += len(t.ToolCalls[i].Name) + len(t.ToolCalls[i].Input)
	}
	if t.Usage == (Usage{}) {
		t.Usage = Usage{In: int64(max(1, bodyLen/4)), Out: int64(max(1, out/4))}
	}
	return t
}

// inputObject is a call's input as a JSON object, {} if it isn't one.
func inputObject(input string) json.RawMessage {
	var m map[string]any
	if json.Unmarshal([]byte(input), &m) != nil || m == nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(input)
}

// signature is the fake signature of a thinking block: the same thinking
// is always signed the same.
func signature(thinking string) string {
	sum := sha256.Sum256([]byte("fakeprovider thinking\x00" + thinking))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// textChunks is how many pieces a text streams in.
const textChunks = 3

// marshal encodes v as the providers do, leaving <, > and & as they are.
func marshal(v any) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only the package's own values are encoded; they always encode.
		panic("fakeprovider: encode: " + err.Error())
	}
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}

// obj is a JSON object of the wire.
type obj = map[string]any
