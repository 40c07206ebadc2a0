//go:build !linux

package hub

import "time"

// KeeperMain returns at once: a harness runs under a keeper on Linux
// alone (a child subreaper), elsewhere as it is.
func KeeperMain() {}

// keeperCommand is command as it is: there is no keeper here.
func keeperCommand(command, env []string, grace time.Duration) ([]string, []string, bool) {
	return command, env, false
}
