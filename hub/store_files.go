package hub

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lnk-dev/link/contract"
)

// This file holds what every Store over a harness's own files needs
// alike: where the harness keeps them, which session ids may name a
// file, and how a message from someone else is written into its text.

// AgentDir is the folder a harness keeps its files in under env: the
// variable's value when set, else dotName in $HOME (or the user's home).
func AgentDir(env map[string]string, variable, dotName string) (string, error) {
	if d := env[variable]; d != "" {
		return filepath.Abs(d)
	}
	home := env["HOME"]
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the harness's folder: %w (set %s)", err, variable)
		}
		home = h
	}
	return filepath.Join(home, dotName), nil
}

// IsUUID reports whether id is a UUID in its text form, as the harnesses
// name their sessions; only such an id is made into a file's name, so
// none names a path out of its folder.
func IsUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i, c := range id {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// SenderText is an imported message's text as a harness that reads no
// _meta keeps it: the owner's as it came, anyone else's after a line
// saying who, each of their lines quoted.
func SenderText(e contract.StateEntry) string {
	if e.From == "" {
		return e.Text
	}
	who := e.From
	if e.FromName != "" {
		who = e.FromName + " (" + e.From + ")"
	}
	return "Message from " + who + ":\n" + quote(e.Text)
}
