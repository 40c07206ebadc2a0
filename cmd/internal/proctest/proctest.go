// Package proctest is what the tests and benchmarks of Link's programs
// share about a server process they started: its memory as Linux reports
// it, and a prompt sent to it as a bridge sends one.
package proctest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/endpoint"
)

// Status is a memory field of process pid's /proc/<pid>/status (VmHWM,
// the peak resident memory; VmRSS, the resident memory now), in bytes.
func Status(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// Prompt sends one prompt of text in thread to the agent at url, dialed
// with key (agent "" is the endpoint's default), as a bridge does: it
// initializes, resumes the thread and waits for the prompt's response.
func Prompt(ctx context.Context, url string, key []byte, agent, thread, text string) error {
	conn, err := endpoint.Dial(ctx, endpoint.DialOptions{URL: url, Key: key, Agent: agent})
	if err != nil {
		return err
	}
	c := acp.NewClient(ctx, conn, nil)
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return err
	}
	if err := c.Resume(ctx, thread); err != nil {
		return err
	}
	_, err = c.Prompt(ctx, thread, []acp.Block{{Type: "text", Text: text}}, nil)
	return err
}
