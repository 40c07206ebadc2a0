package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// keyFileMissing is err, met reading the key file at path, saying how to
// make one when there is none.
func keyFileMissing(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no key file at %s: make one with `lnk agent key --key-file %s` (a random key, readable by you alone), or name another with --key-file or $LNK_KEY_FILE", path, path)
	}
	return err
}

func (m *Main) keyCmd() *cobra.Command {
	var home, agent, keyFile string
	c := &cobra.Command{
		Use:   "key",
		Short: "make the agent's endpoint key file when there is none, and print where it is",
		Long: `Makes the file holding the agent's endpoint key, when there is none: a
random key of 64 characters, readable by its owner alone (0600), as lnk
agent chat makes it once. Prints the file's path, never the key. The file
is --key-file, else $LNK_KEY_FILE, else endpoint.key in the agent's folder.
An existing file is left as it is.`,
		Example: `  lnk agent key
  lnk-link-harness serve --key-file "$(lnk agent key --agent research)"`,
		Args: noWords,
		RunE: func(c *cobra.Command, _ []string) error {
			path := firstOf(keyFile, m.Env["LNK_KEY_FILE"])
			if path == "" {
				h := firstOf(home, m.Env["LNK_HOME"])
				if h == "" {
					dir, err := os.UserConfigDir()
					if err != nil {
						return fmt.Errorf("find the Link home: %w (say --home)", err)
					}
					h = filepath.Join(dir, "lnk")
				}
				p, err := store.For(h, firstOf(agent, m.Env[contract.EnvAgent], contract.DefaultAgent))
				if err != nil {
					return err
				}
				path = p.KeyFile()
			}
			if _, err := ensureKey(path); err != nil {
				return err
			}
			fmt.Fprintln(m.Stdout, path)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringVar(&home, "home", "", "the Link home `folder` (default $LNK_HOME, else the user's config folder/lnk)")
	fs.StringVar(&agent, "agent", "", "the agent's `name` (default $"+contract.EnvAgent+", else main)")
	fs.StringVar(&keyFile, "key-file", "", "the `file` to make (default $LNK_KEY_FILE, else endpoint.key in the agent's folder)")
	return c
}
