package chatterm

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reeflective/readline"
	"github.com/reeflective/readline/inputrc"
)

// Input reads the owner's messages from the terminal with
// reeflective/readline: the keys of a shell's line editor (arrows,
// Home/End, Ctrl/Alt word moves, Ctrl-R to search past messages, the
// user's ~/.inputrc, under $if lnk), past messages kept in a file, and a
// message of several lines: a paste comes whole (bracketed paste), and
// Alt-Enter, or a line ending in \, goes on to a new line.
type Input struct {
	rl *readline.Shell
}

// Prompt is shown before each message, and Continued before each line of
// a message after its first.
const (
	Prompt    = "› "
	Continued = "· "
)

// OpenInput reads messages from the process's terminal (its standard
// input), keeping past ones in the file history, made readable by its
// owner alone. A history that can't be kept (a read-only home) is said
// in err, and the Input still works, keeping them in memory.
func OpenInput(history string) (in *Input, err error) {
	rl := readline.NewShell(inputrc.WithApp("lnk"))
	rl.Config.Set("enable-bracketed-paste", true)
	rl.Prompt.Primary(func() string { return Prompt })
	rl.Prompt.Secondary(func() string { return Continued })
	rl.AcceptMultiline = func(line []rune) bool {
		return !strings.HasSuffix(strings.TrimRight(string(line), " \t"), `\`)
	}
	rl.Keymap.Register(map[string]func(){
		"lnk-newline": func() { rl.Cursor().InsertAt('\n') },
	})
	// Alt-Enter: ESC then Enter, which the keymaps also hold as the meta
	// key's one byte, read as the same keys.
	for _, km := range []string{"emacs", "emacs-standard", "vi-insert"} {
		for _, key := range []rune{inputrc.Return, inputrc.Newline} {
			rl.Config.Bind(km, string([]rune{inputrc.Esc, key}), "lnk-newline", false)
			rl.Config.Bind(km, string(inputrc.Enmeta(key)), "lnk-newline", false)
		}
	}
	if err = keepHistory(history); err == nil {
		rl.History.AddFromFile("messages", history)
	} else {
		err = fmt.Errorf("past messages are kept for this chat alone: %w", err)
	}
	return &Input{rl: rl}, err
}

// keepHistory makes the history file if there is none, for its owner
// alone, and refuses one that isn't a plain file (a link).
func keepHistory(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		return f.Close()
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a plain file", path)
	case st.Mode().Perm() != 0o600:
		return os.Chmod(path, 0o600)
	}
	return nil
}

// Read reads one message: its lines joined by \n, a trailing \ that
// continued a line taken away. At Ctrl-D on an empty line, or Ctrl-C,
// it returns io.EOF: the owner ends the chat.
func (in *Input) Read() (string, error) {
	line, err := in.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", io.EOF
	}
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(line, "\\\n", "\n"), nil
}

// Above shows text above the prompt while a message is being read, the
// prompt and the line being edited drawn again below it: an answer that
// came meanwhile.
func (in *Input) Above(text string) {
	in.rl.Printf("%s", strings.TrimSuffix(text, "\n"))
}
