package mcptools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
)

// listing is one tool's list, as a session starting gave it: a hash of
// its address, its server's instructions (at most MaxInstructions) and
// its calls, sorted by name.
type listing struct {
	Tool         string `json:"tool"`
	Address      string `json:"address"`
	Instructions string `json:"instructions,omitempty"`
	Calls        []call `json:"calls"`
}

// call is one call a tool lists, as the model is offered it.
type call struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
}

// listsFile is tool-lists.json: the agent's tools' lists, by name.
type listsFile struct {
	Tools []listing `json:"tools"`
}

// Bounds of what a tool lists and of tool-lists.json.
const (
	// MaxInstructions bounds the instructions kept of one tool's server:
	// the most the prompt says of one (prompt.MaxToolText;
	// TestBoundsMatchHarness holds the two together).
	MaxInstructions = 2 << 10
	// maxCalls bounds the calls kept of one tool.
	maxCalls = 512
	// maxListsFile bounds what is read of tool-lists.json.
	maxListsFile = 16 << 20
	// maxPages bounds the pages of one listing.
	maxPages = 64
)

// errCorruptLists: tool-lists.json isn't one this package wrote.
var errCorruptLists = errors.New("tool-lists.json is corrupt")

// addressHash is what tool-lists.json keeps of an address, which carries
// the proxy's secret: its SHA-256, in hex.
func addressHash(addr string) string {
	sum := sha256.Sum256([]byte(addr))
	return hex.EncodeToString(sum[:])
}

// newListing makes tool's listing from what its server said: its
// instructions, cut to MaxInstructions, and its calls sorted by name.
// A call whose offered name (<tool>__<call>) isn't a name, or that comes
// twice, is left out; a schema that isn't a JSON object is an object's.
func newListing(tool, addr, instructions string, listed []*mcp.Tool) listing {
	l := listing{Tool: tool, Address: addressHash(addr), Instructions: cutInstructions(instructions), Calls: []call{}}
	seen := map[string]bool{}
	for _, t := range listed {
		if t == nil || seen[t.Name] || contract.CheckToolName(offered(tool, t.Name)) != nil {
			continue
		}
		seen[t.Name] = true
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		l.Calls = append(l.Calls, call{Name: t.Name, Description: desc, Schema: schemaOf(t.InputSchema)})
	}
	sort.Slice(l.Calls, func(i, j int) bool { return l.Calls[i].Name < l.Calls[j].Name })
	if len(l.Calls) > maxCalls {
		l.Calls = l.Calls[:maxCalls]
	}
	return l
}

// offered is the name a call is offered by: <tool>__<call>.
func offered(tool, call string) string { return tool + "__" + call }

// objectSchema is the schema of a call that gives none.
var objectSchema = json.RawMessage(`{"type":"object"}`)

// schemaOf is a call's input schema in one canonical form (keys sorted,
// no space), so a list read back from tool-lists.json offers the same
// bytes as one listed.
func schemaOf(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return objectSchema
	}
	c, err := canonical(b)
	if err != nil || len(c) == 0 || c[0] != '{' {
		return objectSchema
	}
	return c
}

// canonical re-encodes a JSON value with its objects' keys sorted.
func canonical(b []byte) (json.RawMessage, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// cutInstructions trims a server's instructions and cuts them to
// MaxInstructions bytes at a rune boundary.
func cutInstructions(s string) string {
	s = string(bytes.TrimSpace([]byte(s)))
	if len(s) <= MaxInstructions {
		return s
	}
	n := MaxInstructions
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// equal says whether two listings offer and describe the same.
func (l listing) equal(o listing) bool {
	a, _ := json.Marshal(l)
	b, _ := json.Marshal(o)
	return bytes.Equal(a, b)
}

// parseLists reads tool-lists.json, checking every rule a listing made
// here keeps; schemas come back canonical.
func parseLists(b []byte) (map[string]listing, error) {
	var f listsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorruptLists, err)
	}
	out := make(map[string]listing, len(f.Tools))
	for _, l := range f.Tools {
		if !toolName(l.Tool) {
			return nil, fmt.Errorf("%w: %q is not a tool's name", errCorruptLists, l.Tool)
		}
		if _, ok := out[l.Tool]; ok {
			return nil, fmt.Errorf("%w: %s is listed twice", errCorruptLists, l.Tool)
		}
		if h, err := hex.DecodeString(l.Address); err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("%w: %s's address is not a hash", errCorruptLists, l.Tool)
		}
		if len(l.Instructions) > MaxInstructions {
			return nil, fmt.Errorf("%w: %s's instructions pass %d bytes", errCorruptLists, l.Tool, MaxInstructions)
		}
		if len(l.Calls) > maxCalls {
			return nil, fmt.Errorf("%w: %s lists %d calls, over %d", errCorruptLists, l.Tool, len(l.Calls), maxCalls)
		}
		for i, c := range l.Calls {
			if err := contract.CheckToolName(offered(l.Tool, c.Name)); err != nil || c.Name == "" {
				return nil, fmt.Errorf("%w: %s lists a call named %q", errCorruptLists, l.Tool, c.Name)
			}
			if i > 0 && l.Calls[i-1].Name >= c.Name {
				return nil, fmt.Errorf("%w: %s's calls are not in order of name", errCorruptLists, l.Tool)
			}
			s, err := canonical(c.Schema)
			if err != nil || len(s) == 0 || s[0] != '{' {
				return nil, fmt.Errorf("%w: %s__%s's schema is not an object", errCorruptLists, l.Tool, c.Name)
			}
			l.Calls[i].Schema = s
		}
		if l.Calls == nil {
			l.Calls = []call{}
		}
		out[l.Tool] = l
	}
	return out, nil
}

// encodeLists is tool-lists.json's bytes for lists, sorted by tool.
func encodeLists(lists map[string]listing) []byte {
	f := listsFile{Tools: make([]listing, 0, len(lists))}
	for _, l := range lists {
		f.Tools = append(f.Tools, l)
	}
	sort.Slice(f.Tools, func(i, j int) bool { return f.Tools[i].Tool < f.Tools[j].Tool })
	b, _ := json.MarshalIndent(f, "", "  ")
	return append(b, '\n')
}

// readLists reads the file at path: nil and no error when there's none.
func readLists(ctx context.Context, path string) (map[string]listing, []byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	b, err := fsx.ReadLimit(path, maxListsFile) // never through a link
	if errors.Is(err, fsx.ErrTooBig) {
		return nil, nil, fmt.Errorf("read %s: %w: over %d bytes", path, errCorruptLists, maxListsFile)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if b == nil {
		return nil, nil, nil
	}
	lists, err := parseLists(b)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	return lists, b, nil
}

// writeLists replaces the file at path with b, whole or not at all.
func writeLists(ctx context.Context, path string, b []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".tool-lists-*.json")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
