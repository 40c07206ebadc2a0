// Package actions reads Link's namespaces' actions.toml files, the
// commands of each namespace and the names a harness may offer them by
// (docs/actions.md), for the hub. The chat namespace's ships inside it.
package actions

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"os"

	"github.com/BurntSushi/toml"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/hub"
)

// MaxFile bounds an actions.toml read.
const MaxFile = 64 << 10

// maxActions bounds the actions of one file, maxNames each list.
const (
	maxActions = 256
	maxNames   = 32
)

//go:embed chat/actions.toml
var chatFile []byte

// Chat is the chat namespace's actions.
func Chat() []hub.Action {
	a, err := Parse(chatFile)
	if err != nil {
		panic("actions: the chat namespace's actions.toml: " + err.Error())
	}
	return a
}

// file is an actions.toml as TOML holds it.
type file struct {
	Namespace string `toml:"namespace"`
	Actions   []struct {
		Name        string   `toml:"name"`
		Aliases     []string `toml:"aliases"`
		Names       []string `toml:"names"`
		Description string   `toml:"description"`
		Hint        string   `toml:"hint"`
		Route       string   `toml:"route"`
		NewSession  bool     `toml:"new_session"`
	} `toml:"actions"`
}

// Load reads the actions.toml at path.
func Load(path string) ([]hub.Action, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read actions: %w", err)
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(io.LimitReader(f, MaxFile+1)); err != nil { // one byte over, for Parse to refuse
		return nil, fmt.Errorf("read actions %s: %w", path, err)
	}
	a, err := Parse(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("actions %s: %w", path, err)
	}
	return a, nil
}

// Parse reads an actions.toml, each rule of docs/actions.md checked: a
// broken one is refused naming the rule.
func Parse(b []byte) ([]hub.Action, error) {
	if len(b) > MaxFile {
		return nil, rule("actions.toml", "an actions.toml is at most %d bytes", MaxFile)
	}
	var f file
	md, err := toml.Decode(string(b), &f)
	if err != nil {
		return nil, rule("actions.toml", "an actions.toml is TOML: %v", err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return nil, rule(undecoded[0].String(), "an actions.toml has namespace and [[actions]] of name, aliases, names, description, hint, route and new_session alone")
	}
	if !isWord(f.Namespace) {
		return nil, rule("namespace", "a namespace is 1 to 64 lowercase letters, digits, _ and -")
	}
	if len(f.Actions) > maxActions {
		return nil, rule("actions", "a namespace has at most %d actions", maxActions)
	}
	out := make([]hub.Action, 0, len(f.Actions))
	seen := map[string]bool{}
	for i, a := range f.Actions {
		field := fmt.Sprintf("actions[%d]", i)
		if !isWord(a.Name) {
			return nil, rule(field+".name", "an action's name is 1 to 64 lowercase letters, digits, _ and -")
		}
		if seen[a.Name] {
			return nil, rule(field+".name", "an action is named once in its namespace")
		}
		seen[a.Name] = true
		if len(a.Aliases) > maxNames || len(a.Names) > maxNames {
			return nil, rule(field, "an action has at most %d aliases and %d names", maxNames, maxNames)
		}
		for _, al := range a.Aliases {
			if !isWord(al) {
				return nil, rule(field+".aliases", "an alias is 1 to 64 lowercase letters, digits, _ and - (no namespace)")
			}
		}
		for _, n := range a.Names {
			if !isCommand(n) {
				return nil, rule(field+".names", "a harness's name of an action is 1 to 64 characters with no slash, space or control character")
			}
		}
		if a.Route != "" {
			if err := contract.CheckToolName(a.Route); err != nil {
				return nil, rule(field+".route", "a route is a tool call's name, as Link Harness offers it (task__list)")
			}
			if len(a.Names) > 0 || a.NewSession {
				return nil, rule(field, "an action Link runs (route) has no harness names and no new_session")
			}
		}
		if len(a.Description) > 1024 || len(a.Hint) > 256 {
			return nil, rule(field, "a description is at most 1024 bytes, a hint 256")
		}
		out = append(out, hub.Action{Namespace: f.Namespace, Name: a.Name, Aliases: a.Aliases, Names: a.Names, Description: a.Description, Hint: a.Hint, Route: a.Route, NewSession: a.NewSession})
	}
	return out, nil
}

func rule(field, format string, args ...any) error {
	return &contract.RuleError{Field: field, Rule: fmt.Sprintf(format, args...)}
}

// isWord says whether s is 1 to 64 lowercase letters, digits, _ and -.
func isWord(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// isCommand says whether s can be a harness's command name.
func isCommand(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c == '/' || c == 0x7f {
			return false
		}
	}
	return true
}
