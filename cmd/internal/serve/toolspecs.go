package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
)

// toolSpecs reads config.json's tools ([tools], for every tool) and tool
// ([tool.<name>], by tool name), each a JSON object: tools as it is, and
// for each tool named, its table over tools's, merged key by key, as
// harness.Settings keeps them. Absent or null is none.
func toolSpecs(tools, tool json.RawMessage) (json.RawMessage, map[string]json.RawMessage, error) {
	common, err := table(tools, "tools")
	if err != nil {
		return nil, nil, err
	}
	var all json.RawMessage
	if common != nil {
		if all, err = json.Marshal(common); err != nil {
			return nil, nil, fmt.Errorf("tools: %w", err)
		}
	}
	var named map[string]json.RawMessage
	if isNone(tool) {
		return all, nil, nil
	}
	if !isObject(tool) || json.Unmarshal(tool, &named) != nil {
		return nil, nil, keyError("tool", fmt.Errorf("tool is an object of tables by tool name ([tool.<name>]), not %s", kindOf(tool)))
	}
	each := make(map[string]json.RawMessage, len(named))
	for name, raw := range named {
		if !toolName(name) {
			return nil, nil, keyError("tool", fmt.Errorf("tool.%q: a tool's name is 1 to %d lowercase letters, digits and single _, as it is offered (<name>__<call>)", truncate(name, 64), maxToolName))
		}
		own, err := table(raw, "tool."+name)
		if err != nil {
			return nil, nil, err
		}
		if own == nil {
			continue // none: [tools] alone
		}
		merged := maps.Clone(common)
		if merged == nil {
			merged = map[string]json.RawMessage{}
		}
		maps.Copy(merged, own)
		if each[name], err = json.Marshal(merged); err != nil {
			return nil, nil, fmt.Errorf("tool.%s: %w", name, err)
		}
	}
	return all, each, nil
}

// table reads one table of the spec: a JSON object, by key; nil for none.
func table(raw json.RawMessage, field string) (map[string]json.RawMessage, error) {
	if isNone(raw) {
		return nil, nil
	}
	var t map[string]json.RawMessage
	if !isObject(raw) || json.Unmarshal(raw, &t) != nil {
		return nil, keyError(field, fmt.Errorf("%s is a table of the spec, a JSON object, not %s", field, kindOf(raw)))
	}
	return t, nil
}

func isNone(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// kindOf names what a JSON value is, for a refusal.
func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return "nothing"
	case raw[0] == '[':
		return "a list"
	case raw[0] == '"':
		return "a string"
	case raw[0] == 't' || raw[0] == 'f':
		return "true or false"
	case raw[0] == '{':
		return "an object"
	}
	return "a number"
}

// maxToolName bounds a tool's name, as harness/mcptools does.
const maxToolName = 64

// toolName says whether name can name a tool, as harness/mcptools offers
// them: 1 to 64 lowercase letters, digits and '_', never two '_'
// together, nor one at an end.
func toolName(name string) bool {
	if name == "" || len(name) > maxToolName || name[0] == '_' || name[len(name)-1] == '_' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') || c == '_' && name[i-1] == '_' {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
