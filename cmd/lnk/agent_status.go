package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/lnk-dev/link/cmd/internal/agentlog"
	"github.com/lnk-dev/link/cmd/internal/porthold"
	"github.com/lnk-dev/link/cmd/internal/serve"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/harness/mcptools"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/log"
)

// agentStatus is what lnk agent status says of an agent.
type agentStatus struct {
	Agent       string            `json:"agent"`
	Home        string            `json:"home"`
	Folder      string            `json:"folder"`
	Endpoint    endpointStatus    `json:"endpoint"`
	Model       modelChoice       `json:"model"`
	Storage     storageStatus     `json:"storage"`
	Tools       []toolStatus      `json:"tools"`
	KeyFile     keyFileStatus     `json:"keyFile"`
	Log         string            `json:"log"`
	LastFailure *agentlog.Failure `json:"lastFailure,omitempty"`
	Problems    []string          `json:"problems,omitempty"` // what couldn't be read
}

// endpointStatus is where the agent is reached and whether it answers.
type endpointStatus struct {
	URL     string `json:"url"`
	From    string `json:"from"` // --endpoint, $LNK_PORT, the default port
	Answers bool   `json:"answers"`
	Health  string `json:"health"`            // what /health said, or why nothing did
	PID     int    `json:"pid,omitempty"`     // the process listening there, when known
	Command string `json:"command,omitempty"` // its command line
}

// storageStatus is how the agent's conversations are kept.
type storageStatus struct {
	New    string         `json:"new"`    // how a new conversation is kept
	From   string         `json:"from"`   // config.json, or the default
	ByKind map[string]int `json:"byKind"` // the conversations kept, by how
	// LongCompact are the compact conversations past 10,000 events, each
	// of whose turns reads it whole.
	LongCompact []longCompact `json:"longCompact,omitempty"`
	// Bridges are the agent's store bridges its conversations need, one
	// for each driver of a plugin's kept or to keep them.
	Bridges []bridgeStatus `json:"bridges,omitempty"`
}

// bridgeStatus is one of the agent's store bridges, on its socket, and
// whether it answers a ping proved with the agent's key.
type bridgeStatus struct {
	Driver  string `json:"driver"`
	Socket  string `json:"socket"`
	Answers bool   `json:"answers"`
	Error   string `json:"error,omitempty"`
}

// toolStatus is one of the agent's tools and whether it answers MCP's
// initialize.
type toolStatus struct {
	Name    string `json:"name"`
	Host    string `json:"host"` // its address's host alone: the rest may hold a secret
	Answers bool   `json:"answers"`
	Took    string `json:"took,omitempty"`
	Error   string `json:"error,omitempty"`
}

// keyFileStatus is the endpoint key's file: never the key.
type keyFileStatus struct {
	Path    string `json:"path"`
	Exists  bool   `json:"exists"`
	Mode    string `json:"mode,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// toolBound bounds each tool's initialize.
const toolBound = 3 * time.Second

func (m *Main) statusCmd() *cobra.Command {
	var o chatOptions
	var asJSON bool
	c := &cobra.Command{
		Use:   "status",
		Short: "whether the agent answers and where, its model, storage, tools, key file and last failure",
		Long: `Says what runs where for the agent: whether its endpoint answers and
where (the URL, and the process listening there, on Linux), its model and
where that choice came from (--model, $LNK_MODEL, its config.json, or the
default the provider keys set choose), how its conversations are kept, its
tools ($LNK_MEMORY, $LNK_TOOL_<NAME>...) and whether each answers MCP's
initialize within 3s, its home and key file (never the key), and the last
failure in its log (harness.log in the agent's folder).

The endpoint is --endpoint's, else $LNK_PORT's, else the default port's
(18800). The model, storage and tools are those a harness started with
this environment gets.`,
		Example: `  lnk agent status
  lnk agent status --agent research --json
  LNK_PORT=18801 lnk agent status`,
		Args: noWords,
		RunE: func(c *cobra.Command, _ []string) error {
			st := agentStatusOf(c.Context(), o, m.Env)
			if asJSON {
				enc := json.NewEncoder(m.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			st.write(m.Stdout)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.home, "home", "", "the Link home `folder` (default $LNK_HOME, else the user's config folder/lnk)")
	fs.StringVar(&o.agent, "agent", "", "the agent's `name` (default $"+contract.EnvAgent+", else main)")
	fs.StringVar(&o.endpoint, "endpoint", "", "the agent's endpoint `URL` (default $LNK_PORT's, else the default port's)")
	fs.StringVar(&o.keyFile, "key-file", "", "the `file` holding the endpoint key (default $LNK_KEY_FILE, else the agent's endpoint.key under its home)")
	fs.StringVar(&o.model, "model", "", "the `model` a harness started here would run (default $LNK_MODEL, else config.json's, else the default)")
	fs.BoolVar(&asJSON, "json", false, "print it as JSON")
	groupFlags(fs, "The agent", "home", "agent")
	groupFlags(fs, "Reaching it", "endpoint", "key-file", "model")
	return c
}

// agentStatusOf finds out the agent's status; what it can't read it
// says in Problems.
func agentStatusOf(ctx context.Context, o chatOptions, env map[string]string) agentStatus {
	var st agentStatus
	problem := func(format string, a ...any) { st.Problems = append(st.Problems, fmt.Sprintf(format, a...)) }
	st.Home = firstOf(o.home, env["LNK_HOME"])
	if st.Home == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			st.Home = filepath.Join(dir, "lnk")
		}
	}
	st.Agent = firstOf(o.agent, env[contract.EnvAgent], contract.DefaultAgent)
	p, err := store.For(st.Home, st.Agent)
	if err != nil {
		problem("%v", err)
		return st
	}
	st.Folder = p.Root
	st.Endpoint = endpointStatusOf(ctx, o.endpoint, env)
	if st.Model, err = chooseModel(ctx, p, o.model, env); err != nil {
		problem("the model: %v", err)
	}
	st.Storage = storageStatusOf(ctx, p, problem)
	st.Tools = toolsStatus(ctx, env)
	st.KeyFile = keyFileStatusOf(firstOf(o.keyFile, env["LNK_KEY_FILE"], p.KeyFile()))
	st.Storage.Bridges = bridgesStatus(ctx, p, st.Storage, st.KeyFile.Path)
	st.Log = agentlog.File(p)
	if f, ok, err := agentlog.Last(ctx, p); err != nil {
		problem("read the log: %v", err)
	} else if ok {
		st.LastFailure = &f
	}
	return st
}

// endpointStatusOf asks the endpoint's /health, and finds who listens
// there when it is on this machine.
func endpointStatusOf(ctx context.Context, endpoint string, env map[string]string) endpointStatus {
	e := endpointStatus{URL: endpoint, From: "--endpoint"}
	if endpoint == "" {
		port, err := contract.Port(env[contract.EnvPort])
		if err != nil {
			return endpointStatus{From: "$" + contract.EnvPort, Health: err.Error()}
		}
		e.URL, e.From = contract.EndpointURL(port), "$"+contract.EnvPort
		if env[contract.EnvPort] == "" {
			e.From = "the default port"
		}
	}
	u, err := url.Parse(e.URL)
	if err != nil || u.Host == "" {
		e.Health = fmt.Sprintf("%q is not an endpoint's URL", e.URL)
		return e
	}
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	health := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: contract.HealthPath}).String()
	req, err := http.NewRequestWithContext(hctx, http.MethodGet, health, nil)
	if err == nil {
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(req); err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			e.Answers = resp.StatusCode == http.StatusOK
			e.Health = strings.TrimSpace(fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b))))
		}
	}
	if err != nil {
		e.Health = "nothing answers: " + err.Error()
	}
	if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
		if port, err := strconv.Atoi(u.Port()); err == nil {
			if h, ok := porthold.Find(port); ok {
				e.PID, e.Command = h.PID, h.Command
			}
		}
	}
	return e
}

// storageStatusOf reads how new conversations are kept and counts the
// ones kept, by how.
func storageStatusOf(ctx context.Context, p store.Paths, problem func(string, ...any)) storageStatus {
	s := storageStatus{New: log.Name, From: "the default", ByKind: map[string]int{}}
	if set, err := serve.ReadSettings(ctx, p, ""); err == nil && set.Conversations != "" {
		s.New, s.From = set.Conversations, "config.json"
	}
	entries, err := os.ReadDir(p.Chats())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		problem("list the conversations: %v", err)
	}
	var compacts []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		kind, err := driver.Of(filepath.Join(p.Chats(), e.Name()))
		if err != nil || kind == "" {
			continue
		}
		s.ByKind[kind]++
		if kind == compact.Name {
			compacts = append(compacts, e.Name())
		}
	}
	s.LongCompact = longCompacts(ctx, p.Chats(), compacts, problem)
	return s
}

// toolsStatus asks each tool env names for MCP's initialize, at once,
// each within toolBound.
func toolsStatus(ctx context.Context, env map[string]string) []toolStatus {
	servers := mcptools.Servers(env)
	out := make([]toolStatus, len(servers))
	done := make(chan struct{}, len(servers))
	for i, s := range servers {
		go func() {
			defer func() { done <- struct{}{} }()
			out[i] = toolStatusOf(ctx, s)
		}()
	}
	for range servers {
		<-done
	}
	return out
}

func toolStatusOf(ctx context.Context, s mcptools.Server) toolStatus {
	t := toolStatus{Name: s.Name}
	if u, err := url.Parse(s.Addr); err == nil {
		t.Host = u.Host
	}
	ctx, cancel := context.WithTimeout(ctx, toolBound)
	defer cancel()
	start := time.Now()
	client := mcp.NewClient(&mcp.Implementation{Name: "lnk agent status", Version: buildVersion().Version}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.Addr, DisableStandaloneSSE: true, MaxRetries: 1}, nil)
	if err != nil {
		t.Error = err.Error()
		if ctx.Err() != nil {
			t.Error = fmt.Sprintf("no answer to initialize within %v", toolBound)
		}
		// Never the address: it may hold a secret.
		t.Error = strings.ReplaceAll(t.Error, s.Addr, t.Host)
		return t
	}
	t.Answers, t.Took = true, time.Since(start).Round(time.Millisecond).String()
	cs.Close()
	return t
}

// keyFileStatusOf says whether the key file is there and readable by its
// owner alone; it never reads the key out.
func keyFileStatusOf(path string) keyFileStatus {
	k := keyFileStatus{Path: path}
	fi, err := os.Stat(path)
	if err != nil {
		k.Problem = keyFileMissing(path, err).Error()
		return k
	}
	k.Exists, k.Mode = true, fmt.Sprintf("%#o", fi.Mode().Perm())
	if fi.Mode().Perm()&0o077 != 0 {
		k.Problem = "others than its owner can read it: chmod 600 " + path
	}
	return k
}

// write says st for a person.
func (st agentStatus) write(w io.Writer) {
	fmt.Fprintf(w, "agent %s\n", st.Agent)
	row := func(name, format string, a ...any) { fmt.Fprintf(w, "  %-9s %s\n", name, fmt.Sprintf(format, a...)) }
	e := st.Endpoint
	switch {
	case e.Answers:
		row("endpoint", "answers at %s (%s)", e.URL, e.From)
	default:
		row("endpoint", "doesn't answer at %s (%s): %s; lnk agent chat starts the agent here", e.URL, e.From, e.Health)
	}
	if e.PID != 0 {
		row("", "process %d: %s", e.PID, e.Command)
	}
	mc := st.Model
	row("model", "%s (%s)", mc.Model, mc.why())
	if mc.NoKey != "" {
		row("", "no provider here serves it: %s", mc.NoKey)
	}
	var kinds []string
	for k, n := range st.Storage.ByKind {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(kinds)
	kept := "none yet"
	if len(kinds) > 0 {
		kept = strings.Join(kinds, ", ")
	}
	row("storage", "new conversations kept as %s (%s); kept now: %s", st.Storage.New, st.Storage.From, kept)
	writeLongCompacts(w, st.Storage.LongCompact)
	for _, b := range st.Storage.Bridges {
		if b.Answers {
			row("", "its %s store bridge answers on %s", b.Driver, b.Socket)
		} else {
			row("", "its %s store bridge doesn't answer on %s (%s): lnk agent chat starts it, or run lnk-%s serve beside the agent", b.Driver, b.Socket, b.Error, b.Driver)
		}
	}
	if len(st.Tools) == 0 {
		row("tools", "none named ($LNK_MEMORY, $LNK_TOOL_<NAME>); lnk agent chat starts memory beside the agent it starts")
	}
	for i, t := range st.Tools {
		name := ""
		if i == 0 {
			name = "tools"
		}
		if t.Answers {
			row(name, "%s at %s: answers (initialize in %s)", t.Name, t.Host, t.Took)
		} else {
			row(name, "%s at %s: doesn't answer: %s", t.Name, t.Host, t.Error)
		}
	}
	row("home", "%s (the agent's folder %s)", st.Home, st.Folder)
	k := st.KeyFile
	switch {
	case !k.Exists:
		row("key file", "%s", k.Problem)
	case k.Problem != "":
		row("key file", "%s (%s): %s", k.Path, k.Mode, k.Problem)
	default:
		row("key file", "%s (%s)", k.Path, k.Mode)
	}
	if f := st.LastFailure; f != nil {
		row("failure", "%s %s: %s (the last in %s)", f.Time, f.Level, f.Message, st.Log)
		row("", "%s", f.Line)
	} else {
		row("failure", "none in %s", st.Log)
	}
	for _, p := range st.Problems {
		row("problem", "%s", p)
	}
}
