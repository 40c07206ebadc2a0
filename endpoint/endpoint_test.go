package endpoint

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
)

// get sends one plain HTTP request to the test server's path.
func get(t *testing.T, ts *testServer, method, path string, h map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(ts.url, contract.ACPPath)+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestProof(t *testing.T) {
	ts := start(t, Config{})
	ch := contract.NewChallenge()
	resp, _ := get(t, ts, "GET", contract.ProofPath, map[string]string{contract.HeaderChallenge: ch})
	if resp.StatusCode != 200 || !contract.VerifyProof([]byte("key-main"), ch, resp.Header.Get(contract.HeaderProof)) {
		t.Fatalf("proof: %d %q, want 200 and main's proof", resp.StatusCode, resp.Header.Get(contract.HeaderProof))
	}
	resp, _ = get(t, ts, "GET", contract.ProofPath, map[string]string{contract.HeaderChallenge: ch, contract.HeaderAgent: "shared", contract.HeaderAgentID: "owner-b/shared"})
	if resp.StatusCode != 200 || !contract.VerifyProof([]byte("key-shared-b"), ch, resp.Header.Get(contract.HeaderProof)) {
		t.Fatalf("proof for an agent by ID: %d, want 200 and that agent's proof", resp.StatusCode)
	}
	for _, c := range []struct {
		method, challenge string
		status            int
		says              string
	}{
		{"GET", "", 400, "challenge"},
		{"GET", strings.Repeat("a", 31), 400, "32 to 128 hex"},
		{"GET", strings.Repeat("a", 129), 400, "32 to 128 hex"},
		{"GET", strings.Repeat("g", 40), 400, "hex characters only"},
		{"POST", ch, 405, "GET"},
	} {
		resp, body := get(t, ts, c.method, contract.ProofPath, map[string]string{contract.HeaderChallenge: c.challenge})
		if resp.StatusCode != c.status || !strings.Contains(body, c.says) {
			t.Errorf("%s proof with challenge %q: %d %q, want %d naming %q", c.method, c.challenge, resp.StatusCode, body, c.status, c.says)
		}
		if resp.Header.Get(contract.HeaderProof) != "" {
			t.Errorf("a refused proof request got a proof")
		}
	}
}

// TestRouting: the proof and the upgrade route alike, before anything
// reaches the agent: 404 for a name not served, an invalid one, or an ID
// that disagrees; 409 for a shared name without an ID.
func TestRouting(t *testing.T) {
	ts := start(t, Config{})
	for _, c := range []struct {
		agent, id string
		status    int
		sentinel  error
	}{
		{"", "", 200, nil},
		{"main", "", 200, nil},
		{"solo", "", 200, nil},
		{"solo", "owner-a/solo", 200, nil},
		{"shared", "owner-a/shared", 200, nil},
		{"nobody", "", 404, ErrUnknownAgent},
		{"Main", "", 404, ErrUnknownAgent},
		{"../main", "", 404, ErrUnknownAgent},
		{"solo", "owner-b/solo", 404, ErrUnknownAgent},
		{"solo", "owner-a/shared", 404, ErrUnknownAgent},
		{"main", "owner-a/solo", 404, ErrUnknownAgent},
		{"shared", "", 409, ErrAgentShared},
	} {
		h := map[string]string{contract.HeaderChallenge: contract.NewChallenge(), contract.HeaderAgent: c.agent, contract.HeaderAgentID: c.id}
		want := c.status
		resp, body := get(t, ts, "GET", contract.ProofPath, h)
		if resp.StatusCode != want {
			t.Errorf("proof for %q/%q: %d %s, want %d", c.agent, c.id, resp.StatusCode, body, want)
		}
		if strings.Contains(body, "key-") {
			t.Errorf("a refusal said a key: %q", body)
		}
		// The upgrade, with a key of the agent when there's one.
		key := []byte("key-main")
		if a, err := Route(testAgents, "", c.agent, c.id); err == nil {
			key = a.Key
		}
		conn, err := Dial(testCtx(t), DialOptions{URL: ts.url, Key: key, Agent: c.agent, AgentID: c.id, NoProof: true})
		if c.sentinel == nil {
			if err != nil {
				t.Errorf("upgrade for %q/%q: %v", c.agent, c.id, err)
				continue
			}
			conn.CloseNow()
			continue
		}
		var de *DialError
		if !errors.As(err, &de) || de.Step != StepUpgrade || de.Status != c.status || !errors.Is(err, c.sentinel) {
			t.Errorf("upgrade for %q/%q: %v, want %d at the upgrade", c.agent, c.id, err, c.status)
		}
		// With the proof first, the dial stops at the proof.
		_, err = Dial(testCtx(t), DialOptions{URL: ts.url, Key: key, Agent: c.agent, AgentID: c.id})
		if !errors.As(err, &de) || de.Step != StepProof || de.Status != c.status || !errors.Is(err, c.sentinel) {
			t.Errorf("dial for %q/%q: %v, want %d at the proof", c.agent, c.id, err, c.status)
		}
	}
	if n := len(ts.agent.got()); n != 0 {
		t.Errorf("the agent got %d prompts", n)
	}
}

// TestOwnAgent: a connection naming no agent is the process's own
// (LNK_AGENT), not main's.
func TestOwnAgent(t *testing.T) {
	ts := start(t, Config{Own: "solo"})
	ctx := testCtx(t)
	if _, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main")}); !errors.Is(err, ErrBadProof) {
		t.Errorf("dial with main's key to an endpoint whose own agent is solo: %v, want ErrBadProof", err)
	}
	c, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-solo")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := message(ctx, c, "telegram:1", "hi"); err != nil {
		t.Fatal(err)
	}
	if p := ts.agent.got()[0]; p.Agent != "solo" {
		t.Errorf("prompt for %q, want solo", p.Agent)
	}
}

// TestKey: the upgrade without the routed agent's key is 401, saying
// nothing else.
func TestKey(t *testing.T) {
	ts := start(t, Config{})
	for _, auth := range []string{"", "Bearer", "Bearer ", "Bearer key-mai", "Bearer key-main2", "bearer key-main", "Basic key-main", "Bearer key-solo"} {
		req, _ := http.NewRequest("GET", ts.url, nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || len(body) != 0 {
			t.Errorf("upgrade with Authorization %q: %d %q, want 401 and nothing said", auth, resp.StatusCode, body)
		}
	}
	_, err := Dial(testCtx(t), DialOptions{URL: ts.url, Key: []byte("wrong"), NoProof: true})
	var de *DialError
	if !errors.As(err, &de) || de.Status != 401 || !errors.Is(err, ErrUnauthorized) {
		t.Errorf("dial with a wrong key: %v, want 401", err)
	}
	if n := len(ts.agent.got()); n != 0 {
		t.Errorf("the agent got %d prompts", n)
	}
}

// TestToolsHeader: Link-Tools reaches the agent parsed; a malformed one is
// 400 naming the rule, before the upgrade.
func TestToolsHeader(t *testing.T) {
	ts := start(t, Config{})
	ctx := testCtx(t)
	tools := []string{"memory__search", "web__fetch"}
	c, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main"), Tools: &tools})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := message(ctx, c, "default", "hi"); err != nil {
		t.Fatal(err)
	}
	none := []string{}
	c, err = Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main"), Tools: &none})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := message(ctx, c, "default", "hi"); err != nil {
		t.Fatal(err)
	}
	c, err = Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := message(ctx, c, "default", "hi"); err != nil {
		t.Fatal(err)
	}
	p := ts.agent.got()
	if p[0].Tools == nil || strings.Join(*p[0].Tools, ",") != "memory__search,web__fetch" {
		t.Errorf("tools %v", p[0].Tools)
	}
	if p[1].Tools == nil || len(*p[1].Tools) != 0 {
		t.Errorf("an empty Link-Tools: %v, want none", p[1].Tools)
	}
	if p[2].Tools != nil {
		t.Errorf("no Link-Tools: %v, want nil", *p[2].Tools)
	}
	bad := []string{"rm -rf /"}
	_, err = Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main"), Tools: &bad})
	var de *DialError
	if !errors.As(err, &de) || de.Status != 400 || !strings.Contains(de.Body, "Link-Tools") || !strings.Contains(de.Body, "a tool's name is") {
		t.Errorf("a malformed Link-Tools: %v, want 400 naming the rule", err)
	}
}

func TestHealth(t *testing.T) {
	ts := start(t, Config{})
	if resp, _ := get(t, ts, "GET", contract.HealthPath, nil); resp.StatusCode != 200 {
		t.Errorf("health: %d, want 200", resp.StatusCode)
	}
	ts.agent.mu.Lock()
	ts.agent.health = errors.New("the harness is starting")
	ts.agent.mu.Unlock()
	if resp, body := get(t, ts, "GET", contract.HealthPath, nil); resp.StatusCode != 503 || !strings.Contains(body, "the harness is starting") {
		t.Errorf("health: %d %q, want 503 with the reason", resp.StatusCode, body)
	}
	if resp, _ := get(t, ts, "GET", "/other", nil); resp.StatusCode != 404 {
		t.Errorf("another path: %d, want 404", resp.StatusCode)
	}
}

// TestMessage: a whole message through Dial and the endpoint, on one TCP
// connection: the proof and the upgrade share it.
func TestMessage(t *testing.T) {
	ts := start(t, Config{})
	ctx := testCtx(t)
	c, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-shared-a"), Agent: "shared", AgentID: "owner-a/shared"})
	if err != nil {
		t.Fatal(err)
	}
	res, chunks, err := message(ctx, c, "slack:D0123ABCDEF", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "end_turn" || chunks != "echo: hello" {
		t.Errorf("answer %+v %q", res, chunks)
	}
	conns := ts.ln.accepted()
	if len(conns) != 1 {
		t.Fatalf("the endpoint accepted %d connections for one message, want 1", len(conns))
	}
	if conns[0].RemoteAddr().String() != c.LocalAddr().String() || conns[0].LocalAddr().String() != c.RemoteAddr().String() {
		t.Errorf("the client's conn %v->%v is not the accepted one %v->%v", c.LocalAddr(), c.RemoteAddr(), conns[0].RemoteAddr(), conns[0].LocalAddr())
	}
	if p := ts.agent.got()[0]; p.Agent != "shared" || p.Thread != "slack:D0123ABCDEF" {
		t.Errorf("prompt %+v", p)
	}
}

// TestClose: Close stops new connections and waits for the upgraded ones,
// which end when their clients close them.
func TestClose(t *testing.T) {
	ts := start(t, Config{})
	ctx := testCtx(t)
	c, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main")})
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- ts.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("close returned (%v) with a connection open", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main")}); err == nil {
		t.Error("a dial after close was answered")
	}
	// The open connection still works until its client closes it.
	if _, chunks, err := message(ctx, c, "default", "still here"); err != nil || chunks != "echo: still here" {
		t.Errorf("message on an open connection during close: %q %v", chunks, err)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("close did not return once the connection ended")
	}
	if err := <-ts.done; err != nil {
		t.Errorf("serve after close: %v", err)
	}
	ts.done <- nil // for the cleanup
}

// TestServeCancel: cancelling Serve's context ends the open connections.
func TestServeCancel(t *testing.T) {
	s, err := New(Config{Agents: testAgents, Handler: AgentHandler{Agent: &echo{}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		ln, err := netListen()
		if err != nil {
			done <- err
			return
		}
		addr <- ln.Addr().String()
		done <- s.Serve(ctx, ln)
	}()
	c, err := Dial(testCtx(t), DialOptions{URL: "http://" + <-addr + "/acp", Key: []byte("key-main")})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	if _, err := c.ReadMessage(rctx); err == nil || rctx.Err() != nil {
		t.Errorf("read after the server's context ended: %v, want the connection ended", err)
	}
}

func TestConfigValidate(t *testing.T) {
	h := AgentHandler{Agent: &echo{}}
	for _, c := range []struct {
		agents []Agent
		says   string
	}{
		{nil, "no agents"},
		{[]Agent{{Name: "Main", Key: []byte("k")}}, "lowercase"},
		{[]Agent{{Name: "main"}}, "no key"},
		{[]Agent{{Name: "a", ID: "x", Key: []byte("k")}, {Name: "b", ID: "x", Key: []byte("k")}}, "held twice"},
		{[]Agent{{Name: "a", Key: []byte("k")}, {Name: "a", ID: "y", Key: []byte("k")}}, "needs each one's ID"},
	} {
		if _, err := New(Config{Agents: c.agents, Handler: h}); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("config %+v: %v, want an error saying %q", c.agents, err, c.says)
		}
	}
	if _, err := New(Config{Agents: testAgents}); err == nil {
		t.Error("a config without a handler was taken")
	}
}

// TestRoutingIDNotKnown: an endpoint that doesn't know an agent's ID (the
// hub, Link Harness without --agent-id) answers a bridge that sends it,
// as Link's does whenever the agent has one, by the agent's name; an ID
// that is another agent's, or that disagrees with the named agent's
// known ID, is still refused (404).
func TestRoutingIDNotKnown(t *testing.T) {
	ts := start(t, Config{})
	ctx := testCtx(t)
	c, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main"), Agent: "main", AgentID: "link-7f3a9c"})
	if err != nil {
		t.Fatalf("main, whose ID the endpoint doesn't know, named with an ID: %v, want answered", err)
	}
	if _, _, err := message(ctx, c, "telegram:1", "hi"); err != nil {
		t.Fatal(err)
	}
	if c, err = Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main"), AgentID: "link-7f3a9c"}); err != nil {
		t.Fatalf("an ID alone, the own agent's ID not known: %v, want answered", err)
	}
	c.CloseNow()
	for _, id := range []string{"owner-a/solo", "owner-a/shared"} {
		if _, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-main"), Agent: "main", AgentID: id}); !errors.Is(err, ErrUnknownAgent) {
			t.Errorf("main with another agent's ID %s: %v, want a 404", id, err)
		}
	}
	if _, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-solo"), Agent: "solo", AgentID: "link-7f3a9c"}); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("solo, whose ID is known, with another: %v, want a 404", err)
	}
	if _, err := Dial(ctx, DialOptions{URL: ts.url, Key: []byte("key-shared-a"), Agent: "shared", AgentID: "link-7f3a9c"}); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("a shared name with an ID neither has: %v, want a 404", err)
	}
}
