// Package agentlog is an agent's log file, <agent folder>/harness.log:
// the warnings and errors of the harness that answers it (lnk-link-harness
// serve, or the one lnk agent chat starts), one slog text line each, so
// that lnk agent status can say the last failure after the process is
// gone. The file is the owner's alone (0600); past MaxSize at an open it
// is moved to harness.log.1, one old file kept. The file is never opened
// through a symbolic link, to write or to read: it lies in the agent's
// folder, where a link could point at another agent's files.
package agentlog

import (
	"bufio"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// MaxSize is the size past which an open starts a new file.
const MaxSize = 1 << 20

// File is the agent's log file.
func File(p store.Paths) string { return filepath.Join(p.Root, "harness.log") }

// Open opens the agent's log for appending, its folder made when there
// is none, and returns a handler writing warnings and errors to it.
// close closes the file.
func Open(p store.Paths) (h slog.Handler, close func() error, err error) {
	path := File(p)
	if err := os.MkdirAll(p.Root, 0o700); err != nil {
		return nil, nil, err
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxSize {
		os.Rename(path, path+".1")
	}
	f, err := fsx.Open(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelWarn}), f.Close, nil
}

// Logger is a logger writing to w at level and, when the agent's log
// opens, its warnings and errors to the log too. close closes the log.
func Logger(p store.Paths, w io.Writer, level slog.Level) (l *slog.Logger, close func() error) {
	out := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
	h, closeLog, err := Open(p)
	if err != nil {
		l := slog.New(out)
		l.Warn("open the agent's log", "file", File(p), "err", err.Error())
		return l, func() error { return nil }
	}
	return slog.New(slog.NewMultiHandler(out, h)), closeLog
}

// Failure is a line of the log: a warning or an error.
type Failure struct {
	Time    string `json:"time"`
	Level   string `json:"level"`
	Message string `json:"message"`
	Line    string `json:"line"` // the whole line
}

// maxLine bounds a line read from the log.
const maxLine = 64 << 10

// Last reads the log's last warning or error; ok is false when the log
// holds none or doesn't exist.
func Last(ctx context.Context, p store.Paths) (Failure, bool, error) {
	f, err := fsx.Open(File(p), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Failure{}, false, nil
	}
	if err != nil {
		return Failure{}, false, err
	}
	defer f.Close()
	var last string
	sc := bufio.NewScanner(io.LimitReader(f, 4*MaxSize))
	sc.Buffer(make([]byte, 4096), maxLine)
	for sc.Scan() {
		if ctx.Err() != nil {
			return Failure{}, false, ctx.Err()
		}
		line := sc.Text()
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			last = line
		}
	}
	if err := sc.Err(); err != nil && last == "" {
		return Failure{}, false, err
	}
	if last == "" {
		return Failure{}, false, nil
	}
	return parse(last), true, nil
}

// parse reads time, level and msg from an slog text line; a line not of
// that form is its own message.
func parse(line string) Failure {
	fl := Failure{Line: line, Message: line}
	for _, key := range []string{"time=", "level=", "msg="} {
		i := strings.Index(line, key)
		if i < 0 || i > 0 && line[i-1] != ' ' {
			continue
		}
		v := line[i+len(key):]
		if strings.HasPrefix(v, `"`) {
			end := 1
			for end < len(v) && (v[end] != '"' || v[end-1] == '\\') {
				end++
			}
			v = strings.ReplaceAll(v[1:min(end, len(v))], `\"`, `"`)
		} else if j := strings.IndexByte(v, ' '); j >= 0 {
			v = v[:j]
		}
		switch key {
		case "time=":
			fl.Time = v
		case "level=":
			fl.Level = v
		case "msg=":
			fl.Message = v
		}
	}
	return fl
}
