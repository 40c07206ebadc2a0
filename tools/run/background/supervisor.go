package background

import "os/exec"

// IsSupervisor says whether args (os.Args) start this program as a
// background command's supervisor: then it calls Supervise and nothing
// else.
func IsSupervisor(args []string) bool {
	return len(args) == 3 && args[1] == SupervisorArg
}

// SupervisorArg is the first argument of a program started as a
// supervisor.
const SupervisorArg = "lnk-run-supervise"

// Builder makes the command a job's spec says (the sandbox's, in lnk).
type Builder func(spec []byte) (*exec.Cmd, error)
