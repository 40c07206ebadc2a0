package hub

import (
	"os"
	"testing"

	"github.com/lnk-dev/link/internal/stdioagent"
)

// The test binary is also the scripted harness the hub runs.
func TestMain(m *testing.M) {
	KeeperMain()
	stdioagent.Main()
	os.Exit(m.Run())
}

// The scripted agent's environment, as the tests name it.
const (
	envState      = stdioagent.EnvState
	envFail       = stdioagent.EnvFail
	envCaps       = stdioagent.EnvCaps
	envNoTerm     = stdioagent.EnvNoTerm
	envLate       = stdioagent.EnvLate
	envNoLists    = stdioagent.EnvNoLists
	envNoResume   = stdioagent.EnvNoResume
	envLateList   = stdioagent.EnvLateList
	envLateReplay = stdioagent.EnvLateReplay
	envSlowTake   = stdioagent.EnvSlowTake
)
