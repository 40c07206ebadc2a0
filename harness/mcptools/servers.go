package mcptools

import (
	"sort"
	"strings"
)

// server is one tool as the environment names it: its name (memory, web,
// acme_memory) and its address, an MCP server over Streamable HTTP.
type server struct {
	name string
	addr string
}

// Link's own tools, each at a variable of its own.
var ownServers = map[string]string{
	"LNK_MEMORY":    "memory",
	"LNK_SCHEDULER": "scheduler",
	"LNK_RUN":       "run",
	"LNK_FILE":      "file",
	"LNK_CODE":      "code",
}

// toolPrefix starts the variable of any other tool: $LNK_TOOL_<NAME>.
const toolPrefix = "LNK_TOOL_"

// servers reads the tools env names, sorted by name. A tool's name is
// its variable's <NAME> in lower case; one that isn't 1 to 64 letters,
// digits and single '_' (so <tool>__<call> splits one way) is left out,
// as is an empty address. Link's own variable wins over a
// $LNK_TOOL_<NAME> of the same name, and of two variables differing only
// in case, the first in byte order.
func servers(env map[string]string) []server {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	byName := map[string]server{}
	for _, own := range []bool{true, false} {
		for _, k := range keys {
			name, ok := ownServers[k]
			if !own {
				var rest string
				rest, ok = strings.CutPrefix(k, toolPrefix)
				name = strings.ToLower(rest)
			}
			addr := strings.TrimSpace(env[k])
			if _, taken := byName[name]; !ok || taken || addr == "" || !toolName(name) {
				continue
			}
			byName[name] = server{name: name, addr: addr}
		}
	}
	out := make([]server, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// maxToolName bounds a tool's name, so <tool>__<call> has room for its
// call within a name's 128 characters.
const maxToolName = 64

// toolName says whether name can name a tool: 1 to 64 lower-case
// letters, digits and '_', never two '_' together, nor one at an end.
func toolName(name string) bool {
	if name == "" || len(name) > maxToolName || name[0] == '_' || name[len(name)-1] == '_' || strings.Contains(name, "__") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Server is one of Link's tools as the environment names it: its name
// and its address, an MCP server over Streamable HTTP.
type Server struct {
	Name string // memory, scheduler, acme_memory
	Addr string
}

// Servers are the tools env names ($LNK_MEMORY, $LNK_TOOL_<NAME>...),
// sorted by name, by the rules Link Harness reads them with: for an
// adapter that hands them to a harness of its own.
func Servers(env map[string]string) []Server {
	in := servers(env)
	out := make([]Server, len(in))
	for i, s := range in {
		out[i] = Server{Name: s.name, Addr: s.addr}
	}
	return out
}

// ToolVars are the variables of env that name tools by the rules Servers
// reads them with ($LNK_MEMORY, $LNK_TOOL_<NAME>...): for an adapter that
// keeps them for a later start (lnk-acp configure).
func ToolVars(env map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		name, own := ownServers[k]
		if !own {
			rest, ok := strings.CutPrefix(k, toolPrefix)
			if !ok {
				continue
			}
			name = strings.ToLower(rest)
		}
		if toolName(name) && strings.TrimSpace(v) != "" {
			out[k] = v
		}
	}
	return out
}
