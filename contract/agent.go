package contract

// DefaultAgent is the agent a connection names when it names none and the
// process was not told its own (LNK_AGENT).
const DefaultAgent = "main"

// MaxAgentLen bounds an agent's name.
const MaxAgentLen = 64

// ParseAgentName checks an agent's name: 1 to 64 lowercase letters, digits,
// '_' or '-', starting with a letter or digit. It names a folder, so
// nothing else is let through.
func ParseAgentName(name string) error {
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
