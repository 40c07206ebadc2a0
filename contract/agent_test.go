package contract

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckAgentID(t *testing.T) {
	for _, ok := range []string{"a", "01HZX3K9QF", "owner:agent.1", "550e8400-e29b-41d4-a716-446655440000", strings.Repeat("A", 128)} {
		if err := CheckAgentID(ok); err != nil {
			t.Errorf("CheckAgentID(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a/b", "a\nb", "é", strings.Repeat("a", 129)} {
		err := CheckAgentID(bad)
		var re *RuleError
		if !errors.As(err, &re) || re.Field != "agent-id" {
			t.Errorf("CheckAgentID(%q) = %v, want a refusal of agent-id", bad, err)
		}
	}
}
