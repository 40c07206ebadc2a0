// Package agentsfile reads an agents file, the owner's agents one JSON
// object a line (docs/agents.md): what lnk-link-harness serve --agents
// serves, and where lnk scheduler serve --agents finds an agent's
// teammates.
package agentsfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lnk-dev/link/contract"
)

// Line is one line of an agents file (serve --agents): one agent of
// the owner, as JSON on one line (docs/agents.md, "The agents file").
type Line struct {
	Name    string            `json:"name"`
	ID      string            `json:"id,omitempty"`
	Home    string            `json:"home"`
	Port    int               `json:"port"`
	KeyFile string            `json:"key_file"`
	Env     map[string]string `json:"env,omitempty"`
}

// Bounds of an agents file.
const (
	MaxFile   = 1 << 20
	MaxAgents = 4096
)

// Read reads and checks the agents file at path.
func Read(path string) ([]Line, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("agents file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, fmt.Errorf("agents file %s: %w", path, err)
	}
	agents, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("agents file %s: %w", path, err)
	}
	return agents, nil
}

// Parse reads an agents file: a line per agent, each a JSON
// object; blank lines and lines starting with # are passed over. Each
// agent has a name (contract.CheckAgentName) no other line has, an ID
// (contract.CheckAgentID) when it says one, no other's, an absolute home,
// a port from 0 (a free one) to 65535 no other's, a key file, and env's
// variables, named as variables are; no other key. At least one agent.
func Parse(b []byte) ([]Line, error) {
	if len(b) > MaxFile {
		return nil, fmt.Errorf("over %d bytes", MaxFile)
	}
	var out []Line
	names, ids, ports := map[string]bool{}, map[string]bool{}, map[int]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, MaxFile+1)
	for n := 1; sc.Scan(); n++ {
		l := bytes.TrimSpace(sc.Bytes())
		if len(l) == 0 || l[0] == '#' {
			continue
		}
		a, err := parseLine(l)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		switch {
		case names[a.Name]:
			return nil, fmt.Errorf("line %d: agent %q is on an earlier line: an owner's agents have names of their own", n, a.Name)
		case a.ID != "" && ids[a.ID]:
			return nil, fmt.Errorf("line %d: agent %q: ID %q is another agent's", n, a.Name, a.ID)
		case a.Port != 0 && ports[a.Port]:
			return nil, fmt.Errorf("line %d: agent %q: port %d is another agent's", n, a.Name, a.Port)
		case len(out) == MaxAgents:
			return nil, fmt.Errorf("line %d: over %d agents", n, MaxAgents)
		}
		names[a.Name], ports[a.Port] = true, true
		if a.ID != "" {
			ids[a.ID] = true
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no agents: a line per agent")
	}
	return out, nil
}

// parseLine reads and checks one agent's line.
func parseLine(l []byte) (Line, error) {
	var a Line
	d := json.NewDecoder(bytes.NewReader(l))
	d.DisallowUnknownFields()
	if err := d.Decode(&a); err != nil {
		return a, fmt.Errorf("not an agent's JSON object (name, id, home, port, key_file, env): %w", err)
	}
	if d.More() {
		return a, errors.New("one JSON object a line")
	}
	if err := contract.CheckAgentName(a.Name); err != nil {
		return a, fmt.Errorf("name: %w", err)
	}
	if a.ID != "" {
		if err := contract.CheckAgentID(a.ID); err != nil {
			return a, fmt.Errorf("agent %q: id: %w", a.Name, err)
		}
	}
	if a.Home == "" || !filepath.IsAbs(a.Home) || strings.ContainsRune(a.Home, 0) {
		return a, fmt.Errorf("agent %q: home is an absolute folder", a.Name)
	}
	if a.Port < 0 || a.Port > 65535 {
		return a, fmt.Errorf("agent %q: port is 0 (a free one) to 65535, not %d", a.Name, a.Port)
	}
	if a.KeyFile == "" || strings.ContainsRune(a.KeyFile, 0) {
		return a, fmt.Errorf("agent %q: key_file names the file holding its endpoint key", a.Name)
	}
	for k, v := range a.Env {
		if !envName(k) || strings.ContainsRune(v, 0) {
			return a, fmt.Errorf("agent %q: env: %.64q is not a variable's name (letters, digits, _) and a value without NUL", a.Name, k)
		}
	}
	return a, nil
}

// envName says whether k names an environment variable: letters, digits
// and '_', not starting with a digit.
func envName(k string) bool {
	if k == "" || len(k) > 256 || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
