package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"

	"github.com/lnk-dev/link/internal/fsx"
)

// This file holds what every adapter's ToolSettings needs alike: the
// harness's settings file in a folder of its own, never its owner's, and
// a JSON settings file's mcpServers written.

// MaxSettings bounds a harness's settings file read to write Link's
// tools into it.
const MaxSettings = 4 << 20

// SettingsFile is a harness's settings file in a folder of its own:
// where it is, and its name as people read it ($CODEX_HOME/config.toml),
// so that what is said of it (in /health) names no path of the machine.
type SettingsFile struct {
	Path, Name string
}

// OwnSettings is the settings file rel in the folder env gives the
// harness as its own: variable's value. With variable unset, or naming
// dotName in $HOME (the folder the harness has without it), the folder
// is its owner's own, whose settings are never written: the error says
// so, and what to set.
func OwnSettings(env map[string]string, variable, dotName, rel string) (SettingsFile, error) {
	home := env["HOME"]
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	owners := filepath.Join(home, dotName)
	shown := path.Join("$HOME", dotName)
	v := env[variable]
	if v == "" {
		return SettingsFile{}, fmt.Errorf("$%s is not set, so its folder is its owner's own (%s), never written: set $%s to a folder of the agent's own", variable, shown, variable)
	}
	dir, err := filepath.Abs(v)
	if err != nil {
		return SettingsFile{}, err
	}
	if same(dir, owners) {
		return SettingsFile{}, fmt.Errorf("$%s names its owner's own folder (%s), never written: set it to a folder of the agent's own", variable, shown)
	}
	return SettingsFile{Path: filepath.Join(dir, rel), Name: path.Join("$"+variable, filepath.ToSlash(rel))}, nil
}

// same says whether a and b name one folder: the same path, or the same
// folder on the disk.
func same(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ia, erra := os.Stat(a)
	ib, errb := os.Stat(b)
	return erra == nil && errb == nil && os.SameFile(ia, ib)
}

// Fail wraps err, an error of reading or writing f, in one that says
// what was done ("read", "write") to which file by its name, leaving out
// the path a file's error holds.
func (f SettingsFile) Fail(what string, err error) error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, fsx.ErrSymlink):
		err = fsx.ErrSymlink
	case errors.Is(err, fsx.ErrTooBig):
		err = fmt.Errorf("%w of %d bytes", fsx.ErrTooBig, MaxSettings)
	case errors.As(err, &pe):
		err = pe.Err
	}
	return fmt.Errorf("%s %s: %w", what, f.Name, err)
}

// Read reads f whole, at most MaxSettings: nil when there is none. Its
// folder, or itself, that is a symbolic link is refused: a settings file
// is never read or written where a link points.
func (f SettingsFile) Read() ([]byte, error) {
	if info, err := os.Lstat(filepath.Dir(f.Path)); err == nil && info.Mode()&os.ModeSymlink != 0 {
		return nil, f.Fail("read", fsx.ErrSymlink)
	}
	b, err := fsx.ReadLimit(f.Path, MaxSettings)
	if err != nil {
		return nil, f.Fail("read", err)
	}
	return b, nil
}

// Write replaces f with b whole (a file of the owner's alone, synced),
// its folder made when there is none.
func (f SettingsFile) Write(b []byte) error {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return f.Fail("write", err)
	}
	if err := fsx.Replace(f.Path, b, true); err != nil {
		return f.Fail("write", err)
	}
	return nil
}

// WriteJSONServers sets each of servers, by name, among the mcpServers
// of f, a JSON settings file (made when there is none), every other
// setting left as it was; changed says whether it was written. One whose
// servers are already so is left as it was, however the harness last
// wrote it. A file that isn't a JSON object (one with comments among
// them) is refused and left as it was.
func WriteJSONServers(f SettingsFile, servers map[string]any) (changed bool, err error) {
	old, err := f.Read()
	if err != nil {
		return false, err
	}
	set := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &set); err != nil || set == nil {
			return false, fmt.Errorf("%s is not a JSON object, which Link's tools are written into", f.Name)
		}
	}
	have := map[string]json.RawMessage{}
	if raw, ok := set["mcpServers"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &have); err != nil || have == nil {
			return false, fmt.Errorf("%s: its mcpServers is not a JSON object", f.Name)
		}
	}
	same := true
	for name, s := range servers {
		b, err := json.Marshal(s)
		if err != nil {
			return false, err
		}
		same = same && jsonEqual(have[name], b)
		have[name] = b
	}
	if same && len(old) > 0 {
		return false, nil
	}
	if set["mcpServers"], err = json.Marshal(have); err != nil {
		return false, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(set); err != nil {
		return false, err
	}
	return true, f.Write(buf.Bytes())
}

// jsonEqual says whether a and b are the same JSON value.
func jsonEqual(a, b json.RawMessage) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}
