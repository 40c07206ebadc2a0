package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/lnk-dev/link/hub"
)

var _ hub.ToolSettings = Settings{}

// Settings writes Link's tools into Codex's own settings, for a Codex
// that takes no MCP server over HTTP in its sessions: each a table
// [mcp_servers.NAME] with its url in $CODEX_HOME/config.toml, in a block
// of their own (blockStart to blockEnd) replaced at each write, the rest
// of the file left as it was. Codex reads the file as it starts. A Codex
// without a folder of its own ($CODEX_HOME unset, or ~/.codex) has none
// written: that folder is its owner's own.
type Settings struct {
	// Env is Codex's environment.
	Env map[string]string
}

// The lines around Link's tools in config.toml.
const (
	blockStart = "# Link's tools, written by lnk-acp at each start of Codex: this block is replaced whole.\n"
	blockEnd   = "# The end of Link's tools.\n"
)

// WriteTools writes tools into config.toml's block of Link's tools. A
// config.toml that doesn't read as TOML, that names one of Link's tools
// among its own mcp_servers, or whose mcp_servers can't take a table
// more (an inline table) is refused and left as it was.
func (s Settings) WriteTools(ctx context.Context, tools []hub.Tool) (bool, error) {
	f, err := hub.OwnSettings(s.Env, "CODEX_HOME", ".codex", "config.toml")
	if err != nil {
		return false, err
	}
	old, err := f.Read()
	if err != nil {
		return false, err
	}
	owners, err := withoutBlock(string(old))
	if err != nil {
		return false, fmt.Errorf("%s: %w", f.Name, err)
	}
	var own struct {
		Servers map[string]toml.Primitive `toml:"mcp_servers"`
	}
	md, err := toml.Decode(owners, &own)
	if err != nil {
		return false, fmt.Errorf("%s doesn't read as TOML: %w", f.Name, err)
	}
	// Tables of mcp_servers are added only where TOML lets them be: not
	// to an inline table, nor to anything but a table.
	if typ := md.Type("mcp_servers"); (typ != "" && typ != "Hash") || inlineServers.MatchString(owners) {
		return false, fmt.Errorf("%s can't take Link's tools as tables of mcp_servers: it holds mcp_servers as a value, not a table of tables", f.Name)
	}
	text := strings.TrimRight(owners, " \t\r\n")
	if text != "" {
		text += "\n\n"
	}
	text += blockStart
	sorted := slices.Clone(tools)
	slices.SortFunc(sorted, func(a, b hub.Tool) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range sorted {
		if _, ok := own.Servers[t.Name]; ok {
			return false, fmt.Errorf("%s names mcp_servers.%s itself, one of Link's tools: rename it", f.Name, t.Name)
		}
		text += "[mcp_servers." + tomlString(t.Name) + "]\nurl = " + tomlString(t.URL) + "\n"
	}
	text += blockEnd
	var all struct {
		Servers map[string]struct {
			URL string `toml:"url"`
		} `toml:"mcp_servers"`
	}
	_, err = toml.Decode(text, &all)
	for _, t := range tools {
		if err == nil && all.Servers[t.Name].URL != t.URL {
			err = fmt.Errorf("mcp_servers.%s reads as %q", t.Name, all.Servers[t.Name].URL)
		}
	}
	if err != nil {
		return false, fmt.Errorf("%s can't take Link's tools as tables of mcp_servers: %w", f.Name, err)
	}
	if text == string(old) {
		return false, nil
	}
	if err := f.Write([]byte(text)); err != nil {
		return false, err
	}
	return true, nil
}

// inlineServers finds mcp_servers given a value (an inline table), to
// which TOML adds no table.
var inlineServers = regexp.MustCompile(`(?m)^[ \t]*["']?mcp_servers["']?[ \t]*=`)

// withoutBlock is text without its block of Link's tools.
func withoutBlock(text string) (string, error) {
	i := strings.Index(text, blockStart)
	if i < 0 {
		return text, nil
	}
	j := strings.Index(text[i:], blockEnd)
	if j < 0 {
		return "", fmt.Errorf("its block of Link's tools has no end (%q)", strings.TrimSpace(blockEnd))
	}
	return text[:i] + text[i+j+len(blockEnd):], nil
}

// tomlString is s as a TOML basic string: JSON's escapes are TOML's.
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
