package hub

import (
	"os"
	"testing"

	"github.com/lnk-dev/link/hub/internal/scripted"
)

// The test binary is also the scripted harness the hub runs.
func TestMain(m *testing.M) {
	scripted.Main()
	os.Exit(m.Run())
}

// The scripted agent's environment, as the tests name it.
const (
	envState    = scripted.EnvState
	envFail     = scripted.EnvFail
	envCaps     = scripted.EnvCaps
	envNoTerm   = scripted.EnvNoTerm
	envLate     = scripted.EnvLate
	envNoLists  = scripted.EnvNoLists
	envNoResume = scripted.EnvNoResume
)
