package contract

// DefaultAgent is the agent a connection names when it names none and the
// process was not told its own (LNK_AGENT).
const DefaultAgent = "main"

// MaxAgentLen bounds an agent's name.
const MaxAgentLen = 64

// CheckAgentName checks an agent's name: 1 to 64 lowercase letters, digits,
// '_' or '-', starting with a letter or digit. It names a folder, so
// nothing else is let through.
func CheckAgentName(name string) error {
	if name == "" || len(name) > MaxAgentLen {
		return refuse("agent", "an agent's name is 1 to %d characters", MaxAgentLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return refuse("agent", "an agent's name is lowercase letters, digits, '_' or '-', starting with a letter or digit")
		}
	}
	return nil
}

// MaxAgentIDLen bounds an agent's ID.
const MaxAgentIDLen = 128

// CheckAgentID checks an agent's ID, as Link-Agent-Id carries it: 1 to
// 128 letters, digits, '-', '_', '.' or ':'. Unique across owners where a
// name is unique only to one; nothing else is let through to a header or
// a log.
func CheckAgentID(id string) error {
	if id == "" || len(id) > MaxAgentIDLen {
		return refuse("agent-id", "an agent's ID is 1 to %d characters", MaxAgentIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return refuse("agent-id", "an agent's ID is letters, digits, '-', '_', '.' or ':'")
		}
	}
	return nil
}
