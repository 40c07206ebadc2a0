package contract

import (
	"fmt"
	"strings"
)

// DefaultThread is the thread of a message that names none.
const DefaultThread = "default"

// MaxThreadLen bounds a thread id, so its folder name stays well inside
// every file system's limit.
const MaxThreadLen = 128

// The connections a thread id may name.
var connections = []string{"telegram", "slack", "discord", "signal", "link"}

// CheckThread checks a thread id strictly against the forms of the spec:
//
//	default
//	telegram:<chat id>           telegram:123456789, telegram:-1001234
//	telegram:<group>.<topic id>  a forum topic
//	slack:<id>                   slack:D0123ABCDEF
//	slack:<channel>.<thread ts>  slack:C0123ABC.1700000000.000100
//	discord:<channel id>
//	signal:<number>
//	link:<name>                  lnk agent chat send's; lowercase letters, digits, '.', '_', '-'
//
// Every accepted id has exactly one folder (ThreadFolder), inside the
// conversations folder, and no two ids share one.
func CheckThread(id string) error {
	if id == DefaultThread {
		return nil
	}
	if id == "" {
		return refuse("thread", "a thread id is not empty")
	}
	if len(id) > MaxThreadLen {
		return refuse("thread", "a thread id is at most %d bytes", MaxThreadLen)
	}
	conn, chat, ok := strings.Cut(id, ":")
	if !ok {
		return refuse("thread", "a thread id is <connection>:<chat id> or %q", DefaultThread)
	}
	switch conn {
	case "telegram":
		group, topic, isTopic := strings.Cut(chat, ".")
		if !isInteger(group, true) || isTopic && !isInteger(topic, false) {
			return refuse("thread", "a telegram thread is telegram:<chat id> or telegram:<group>.<topic id>, in digits")
		}
	case "slack":
		channel, ts, isThread := strings.Cut(chat, ".")
		if !isSlackID(channel) || isThread && !isSlackTS(ts) {
			return refuse("thread", "a slack thread is slack:<ID> or slack:<channel>.<thread ts>, an ID in capitals and digits")
		}
	case "discord", "signal":
		if !isInteger(chat, false) {
			return refuse("thread", "a %s thread is %s:<digits>", conn, conn)
		}
	case "link":
		if !isLinkName(chat) {
			return refuse("thread", "a link thread is link:<name>, 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit")
		}
	default:
		return refuse("thread", "unknown connection %q: one of %s", truncate(conn, 32), strings.Join(connections, ", "))
	}
	return nil
}

// ThreadFolder is the folder name of a thread's conversation: its
// connection and chat id joined by '-' (telegram:42 is telegram-42). It
// refuses an id CheckThread refuses, so no folder name it gives holds a
// separator, "..", a NUL or a control character.
func ThreadFolder(id string) (string, error) {
	if err := CheckThread(id); err != nil {
		return "", err
	}
	return strings.Replace(id, ":", "-", 1), nil
}

// FolderThread is ThreadFolder backwards: the thread whose folder is name.
// Connection names hold no '-', so the first one is where the chat id starts.
func FolderThread(name string) (string, error) {
	if name == DefaultThread {
		return name, nil
	}
	conn, chat, ok := strings.Cut(name, "-")
	if !ok {
		return "", refuse("thread", "folder %q names no thread", truncate(name, 64))
	}
	id := conn + ":" + chat
	if err := CheckThread(id); err != nil {
		return "", err
	}
	return id, nil
}

func isInteger(s string, signed bool) bool {
	if signed && strings.HasPrefix(s, "-") {
		s = s[1:]
	}
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isSlackID(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func isSlackTS(s string) bool {
	sec, frac, ok := strings.Cut(s, ".")
	return ok && isInteger(sec, false) && isInteger(frac, false)
}

func isLinkName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// RuleError is a refusal of outside input. Rule names the rule broken, as
// a person can act on it.
type RuleError struct {
	Field string // what was refused: thread, from, tools, challenge...
	Rule  string
}

func (e *RuleError) Error() string { return e.Field + ": " + e.Rule }

func refuse(field, format string, args ...any) error {
	return &RuleError{Field: field, Rule: fmt.Sprintf(format, args...)}
}

// truncate cuts s for quoting in an error, so an over-long input is never
// echoed whole.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
