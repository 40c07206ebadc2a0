package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

const measureLong = `Starts Link Harness (lnk-link-harness serve) on a home of its own with the
offline model, which answers at once, and measures, --runs times, each
figure the median of its runs:

  start to /health: from the process's start to /health answering 200;
  idle memory (VmRSS) of 1, 10 and 100 agents in one process (serve
  --agents), and what each agent past the first adds;
  per message, WebSocket open (dial, proof, upgrade) to its close, the
  prompt answered between: p50 and p99 of --messages messages, in
  conversations already begun (warm) and each the first of its own (cold);
  turns a second with 1, 8 and 64 conversations at once (--turns in all,
  each conversation begun first, untimed, so every timed turn is warm),
  and beside each the CPU a timed turn cost the server's process, user
  and system (from /proc, in ticks of 10 ms: a steadier figure than
  times on a shared machine);
  a blank unit (serve --blank), from the line that binds it to its first
  answer;
  the cached prefix share, once: --prefix-turns messages in one
  conversation over a 24,000-token window against a fake provider in
  Anthropic's format, with compaction and without: the share of the
  requests' bytes that is a byte-identical prefix of the request before
  (target at least 0.97 with compaction).

Beside each time is its floor, measured in the same run: the same messages
to lnk measure floor-server, another process answering the contract's proof,
upgrade and frames at once over bare WebSockets, each message to the floor
just before the harness's; and the ratio. Turns a second are set beside
the floor's at the same number of conversations at once (target at least
0.5 of it at 1, 0.6 at 64), a warm message's p50 beside its floor's (at
most 1.6 times), a cold one's (at most 2.5 times). The machine
and its load are printed beside them: on a shared machine times are noisy.`

// Targets (issues #12 and #29).
const (
	targetStart      = 100 * time.Millisecond
	targetRSS        = 20 << 20
	targetRSSExtra   = 1 << 20
	targetRSS100     = 120 << 20
	targetFloorRatio = 2.5 // a cold message's p50 over its floor's
	targetWarmRatio  = 1.6 // a warm message's p50 over its floor's
	targetBind       = 20 * time.Millisecond
)

// targetTurnsShare is, for a number of conversations at once, the least
// share of its floor's turns a second the harness's should reach (issue
// #29): set beside the floor at the same number, since on two cores the
// floor itself gains only about 2.5 times from 1 at once to 64.
var targetTurnsShare = map[int]float64{1: 0.5, 64: 0.6}

// measureOptions are lnk measure's flags.
type measureOptions struct {
	bin, lnk, home     string
	key                []byte
	keyFile            string
	messages, turns    int
	runs, samples      int
	idle               time.Duration
	agentCounts, concs []int
}

func (m *Main) measureCmd() *cobra.Command {
	var o measureOptions
	var counts, concs string
	var asJSON bool
	var prefixTurns int
	c := &cobra.Command{
		Use:   "measure",
		Short: "measure Link Harness: start, idle memory for 1 to 100 agents, per-message overhead and turns/s, each beside its floor",
		Long:  measureLong,
		Example: `  lnk measure
  lnk measure --runs 5 --json > figures.json
  lnk measure --messages 50 --agents 1,10 --concurrency 1,8 --prefix-turns 0`,
		GroupID: groupCheck,
		Args:    cobra.ArbitraryArgs, // refused below, with the other bad flags
		RunE: func(c *cobra.Command, words []string) error {
			return status(measureMain(c.Context(), o, counts, concs, asJSON, prefixTurns, words, m.Stdout, m.Stderr))
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.bin, "harness", "", "the lnk-link-harness `program` (default: the one on $PATH, else built from this module with go build)")
	fs.StringVar(&o.home, "home", "", "the Link home it runs on (default: a new folder, removed after)")
	fs.IntVar(&o.messages, "messages", 200, "how many messages to time, warm and cold, each run")
	fs.IntVar(&o.turns, "turns", 256, "how many turns each concurrency runs, each run")
	fs.IntVar(&o.runs, "runs", 3, "how many runs each figure is the median of")
	fs.IntVar(&o.samples, "samples", 3, "how many samples of memory to take each time")
	fs.DurationVar(&o.idle, "idle", 6*time.Second, "how long agents are left idle before their memory is sampled (past the 5 s after which an idle harness gives its free memory back)")
	fs.StringVar(&counts, "agents", "1,10,100", "the numbers of agents in one process whose idle memory is measured")
	fs.StringVar(&concs, "concurrency", "1,8,64", "the numbers of conversations at once whose turns a second are measured")
	fs.BoolVar(&asJSON, "json", false, "print the figures as JSON")
	fs.IntVar(&prefixTurns, "prefix-turns", 300, "how many turns the cached prefix measure runs, with compaction and without (0: not measured)")
	groupFlags(fs, "What it runs", "harness", "home")
	groupFlags(fs, "How much", "messages", "turns", "runs", "samples", "idle", "agents", "concurrency", "prefix-turns")
	c.AddCommand(m.floorServerCmd())
	return c
}

// measureMain is lnk measure with its flags; it returns the exit status.
func measureMain(ctx context.Context, o measureOptions, counts, concs string, asJSON bool, prefixTurns int, words []string, stdout, stderr io.Writer) int {
	var err error
	if o.agentCounts, err = positiveInts(counts); err == nil {
		o.concs, err = positiveInts(concs)
	}
	if err != nil || len(words) > 0 || o.messages < 1 || o.turns < 1 || o.runs < 1 || o.samples < 1 || o.idle < 0 || prefixTurns < 0 {
		fmt.Fprintln(stderr, "lnk measure: --messages, --turns, --runs and --samples are at least 1, --idle and --prefix-turns not negative, --agents and --concurrency lists of numbers from 1, and it takes no words")
		return 2
	}
	if o.bin == "" {
		if o.bin, err = findHarness(ctx, stderr); err != nil {
			fmt.Fprintf(stderr, "lnk measure: %v\n", err)
			return 1
		}
	}
	if o.lnk, err = os.Executable(); err != nil {
		fmt.Fprintf(stderr, "lnk measure: find lnk for the floor: %v\n", err)
		return 1
	}
	if o.home == "" {
		dir, err := os.MkdirTemp("", "lnk-measure-")
		if err != nil {
			fmt.Fprintf(stderr, "lnk measure: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		o.home = dir
	}
	o.keyFile = filepath.Join(o.home, "measure.key")
	if o.key, err = ensureKey(o.keyFile); err != nil {
		fmt.Fprintf(stderr, "lnk measure: %v\n", err)
		return 1
	}
	r, err := measure(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "lnk measure: %v\n", err)
		return 1
	}
	var on, off prefixShare
	if prefixTurns > 0 {
		if on, err = measurePrefix(ctx, o.bin, prefixTurns, "0.75"); err == nil {
			off, err = measurePrefix(ctx, o.bin, prefixTurns, `"never"`)
		}
		if err != nil {
			fmt.Fprintf(stderr, "lnk measure: the cached prefix: %v\n", err)
			return 1
		}
		met := on.share >= targetPrefix
		r.Figures = append(r.Figures,
			figure{Name: figPrefixOn, Unit: "share", Value: on.share, Target: fmt.Sprintf("at least %.2f", targetPrefix), Met: &met},
			figure{Name: figPrefixOff, Unit: "share", Value: off.share})
	}
	if asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
		return 0
	}
	r.print(stdout)
	if prefixTurns > 0 {
		printPrefix(stdout, prefixTurns, on, off)
	}
	return 0
}

// positiveInts reads a comma-separated list of numbers from 1.
func positiveInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return nil, fmt.Errorf("%q is not a number from 1 to 4096", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// report is what lnk measure found.
type report struct {
	Machine struct {
		OS        string `json:"os"`
		Arch      string `json:"arch"`
		CPUs      int    `json:"cpus"`
		LoadStart string `json:"load_start"`
		LoadEnd   string `json:"load_end"`
	} `json:"machine"`
	Runs    int      `json:"runs"`
	Figures []figure `json:"figures"`
}

// figure is one measure: its value, the median of the runs', and where
// it has them, its floor in the same runs, the ratio, and its target.
type figure struct {
	Name   string   `json:"name"`
	Unit   string   `json:"unit"` // ms, MB, turns/s
	Value  float64  `json:"value"`
	Floor  *float64 `json:"floor,omitempty"`
	Ratio  *float64 `json:"ratio,omitempty"`
	Target string   `json:"target,omitempty"`
	Met    *bool    `json:"met,omitempty"`
}

func (r report) print(w io.Writer) {
	fmt.Fprintf(w, "Link Harness (lnk-link-harness), the offline model answering at once; each figure the median of %d runs\n", r.Runs)
	fmt.Fprintf(w, "machine: %s/%s, %d CPUs, load %s at the start, %s at the end\n\n", r.Machine.OS, r.Machine.Arch, r.Machine.CPUs, r.Machine.LoadStart, r.Machine.LoadEnd)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "what\tharness\tfloor\tratio\ttarget\tmet")
	for _, f := range r.Figures {
		floor, ratio, met := "", "", ""
		if f.Floor != nil {
			floor = number(*f.Floor, f.Unit)
		}
		if f.Ratio != nil {
			ratio = strconv.FormatFloat(*f.Ratio, 'f', 2, 64) + "×"
		}
		if f.Met != nil {
			met = yesNo(*f.Met)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Name, number(f.Value, f.Unit), floor, ratio, f.Target, met)
	}
	tw.Flush()
}

func number(v float64, unit string) string {
	prec := 2
	switch unit {
	case "turns/s":
		prec = 0
	case "share":
		prec = 3
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + " " + unit
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// findHarness finds lnk-link-harness on $PATH, else builds it from this
// module into a folder of its own.
func findHarness(ctx context.Context, stderr io.Writer) (string, error) {
	if path, err := exec.LookPath("lnk-link-harness"); err == nil {
		return path, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("no lnk-link-harness on $PATH and no go to build it: say --harness")
	}
	dir, err := os.MkdirTemp("", "lnk-measure-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "lnk-link-harness")
	fmt.Fprintln(stderr, "lnk measure: building lnk-link-harness (CGO_ENABLED=0 go build github.com/lnk-dev/link/cmd/lnk-link-harness)")
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, "github.com/lnk-dev/link/cmd/lnk-link-harness")
	// As it is shipped: without cgo, a static program that maps no libc.
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build lnk-link-harness: %w: %s (say --harness)", err, strings.TrimSpace(string(out)))
	}
	return bin, nil
}

// measureEnv is the programs' environment: this one's without a provider
// key or Link's own variables, so the harness runs the offline model alone.
func measureEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") || k == "OLLAMA_HOST" || strings.HasPrefix(k, "LNK_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}
