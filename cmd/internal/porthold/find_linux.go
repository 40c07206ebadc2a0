package porthold

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Find finds the process listening on the TCP port, by the socket's
// inode in /proc/net/tcp and tcp6 and the process whose /proc/PID/fd
// links to it. ok is false when none is found (nothing listens, or the
// process is another user's and can't be read).
func Find(port int) (h Holder, ok bool) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		file, err := os.Open(f)
		if err != nil {
			continue
		}
		for _, ino := range listening(io.LimitReader(file, 64<<20), port) {
			inodes[ino] = true
		}
		file.Close()
	}
	if len(inodes) == 0 {
		return Holder{}, false
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range procs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(dir, "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, "fd", fd.Name()))
			if err != nil {
				continue
			}
			ino, found := strings.CutPrefix(link, "socket:[")
			if found && inodes[strings.TrimSuffix(ino, "]")] {
				return Holder{PID: pid, Command: command(dir)}, true
			}
		}
	}
	return Holder{}, false
}

// command is the process's command line, its arguments spaced, cut to
// maxCommand bytes.
func command(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil || len(b) == 0 {
		b, _ = os.ReadFile(filepath.Join(dir, "comm"))
	}
	s := strings.TrimSpace(string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '})))
	if len(s) > maxCommand {
		s = s[:maxCommand] + "…"
	}
	if s == "" {
		return "a process"
	}
	return s
}

// listenState is a socket's state LISTEN in /proc/net/tcp.
const listenState = "0A"

// listening reads a /proc/net/tcp table and returns the inodes of the
// sockets listening on port, on any address.
func listening(r io.Reader, port int) []string {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64<<10)
	first := true
	for sc.Scan() {
		if first { // the header
			first = false
			continue
		}
		f := strings.Fields(sc.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(f) < 10 || f[3] != listenState {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil || int(p) != port || f[9] == "0" {
			continue
		}
		if _, err := strconv.ParseUint(f[9], 10, 64); err != nil {
			continue
		}
		out = append(out, f[9])
	}
	return out
}

// findsHolders says Find can find a port's holder on this system.
const findsHolders = true
