package background

import (
	"fmt"
	"strings"
	"syscall"
	"time"
)

// tailText bounds the output's last part an end's message quotes.
const tailText = 2 << 10

// endText is what the conversation is told of a command's end: how it
// ended, after how long, and its output's last part, so a short command
// needs no run__read.
func endText(job Job, end End, status Status, dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The background command run:%s ", job.ID)
	switch {
	case status == Lost && end.Error != "":
		fmt.Fprintf(&b, "was lost: how it ended doesn't read (%s).", clip(end.Error, 500))
	case status == Lost:
		b.WriteString("was lost: its supervisor was killed (or the machine stopped) before it could say how the command ended.")
	case strings.HasPrefix(end.Error, "not started: "):
		fmt.Fprintf(&b, "could not be started: %s.", clip(strings.TrimPrefix(end.Error, "not started: "), 500))
	default:
		b.WriteString("ended: ")
		b.WriteString(exitText(end))
		if d := end.Ended.Sub(job.Started).Round(time.Second); d > 0 {
			fmt.Fprintf(&b, ", after %s", d)
		}
		b.WriteString(".")
		if end.Error != "" {
			fmt.Fprintf(&b, " (%s)", clip(end.Error, 500))
		}
	}
	fmt.Fprintf(&b, "\nCommand: %s\n", clip(job.Command, 1000))
	out, err := readOutput(dir, 0, 0)
	if err != nil || out.Total == 0 {
		b.WriteString("It wrote no output.")
		return b.String()
	}
	from := max(out.Total-tailText, 0)
	tail, err := readOutput(dir, from, tailText)
	if err != nil {
		fmt.Fprintf(&b, "Its output (%d bytes) could not be read: %v", out.Total, err)
		return b.String()
	}
	if tail.From == 0 {
		fmt.Fprintf(&b, "Its output, %d bytes:\n", out.Total)
	} else {
		fmt.Fprintf(&b, "Its output, %d bytes; the last of it (run__read with id %s reads the rest kept, from offset 0):\n", out.Total, job.ID)
	}
	b.WriteString(tail.Text)
	return b.String()
}

// sandboxSignal says whether exit is the status a sandbox's trampoline
// answers for a command killed by a signal, 128+n.
func sandboxSignal(exit int) bool { return exit > 128 && exit < 128+65 }

// exitText says how a command's process ended.
func exitText(end End) string {
	switch {
	case end.Signal != "" && end.Stopped:
		return "stopped by run__stop (" + clip(end.Signal, 40) + ")"
	case end.Signal != "":
		return "killed by a signal (" + clip(end.Signal, 40) + ")"
	case end.Stopped && sandboxSignal(end.Exit):
		return fmt.Sprintf("stopped by run__stop (%s)", syscall.Signal(end.Exit-128))
	case end.Stopped:
		return fmt.Sprintf("stopped by run__stop, exit status %d", end.Exit)
	case sandboxSignal(end.Exit):
		return fmt.Sprintf("exit status %d (killed by signal %d, %s)", end.Exit, end.Exit-128, syscall.Signal(end.Exit-128))
	default:
		return fmt.Sprintf("exit status %d", end.Exit)
	}
}
