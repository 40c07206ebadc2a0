//go:build linux

package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/cmd/internal/proctest"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/endpoint"
	"github.com/lnk-dev/link/harness"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/scripted"
)

// envMemoryChild makes the test binary BenchmarkPromptPeakRSS's server:
// "decode" an endpoint whose agent answers at once, "harness" a harness
// whose model answers "ok".
const envMemoryChild = "LNK_TEST_MEMORY_CHILD"

// answered is the decode child's agent: it answers each prompt at once.
type answered struct{}

func (answered) Prompt(ctx context.Context, p acp.Prompt, s acp.Stream) (acp.Outcome, error) {
	return acp.Outcome{StopReason: acp.StopEndTurn}, nil
}

func (answered) Recover(context.Context, string, contract.RecoverParams) (contract.RecoverResult, error) {
	return contract.RecoverResult{}, nil
}

// TestMemoryChild is the server BenchmarkPromptPeakRSS measures, run in
// a process of its own; without its environment it does nothing.
func TestMemoryChild(t *testing.T) {
	mode := os.Getenv(envMemoryChild)
	if mode == "" {
		return
	}
	var url string
	switch mode {
	case "decode":
		srv, err := endpoint.New(endpoint.Config{Agents: []endpoint.Agent{{Name: contract.DefaultAgent, Key: testKey}}, Handler: endpoint.AgentHandler{Agent: answered{}}})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := endpoint.Listen(t.Context(), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(t.Context(), ln)
		url = "http://" + ln.Addr().String() + contract.ACPPath
	case "harness":
		ok := scripted.New()
		for i := 0; i < 16; i++ {
			ok.Push(model.Response{Text: "ok"})
		}
		s, _ := startServed(t, func(c *Config) {
			c.Edit = func(hc *harness.Config) {
				hc.Route = func(name string) (model.Route, error) {
					return model.Route{Provider: scripted.ScriptedName, APIModel: name}, nil
				}
				hc.Provider = func(model.Route) (model.Provider, error) { return ok, nil }
			}
		})
		url = s.URL()
	}
	fmt.Println("url", url)
	io.Copy(io.Discard, os.Stdin) // until the benchmark is done with it
}

// peakOverPrompt starts a child server of mode, sends it a small prompt,
// then one of size bytes, and returns how much its peak resident memory
// (VmHWM) grew over the prompt's size.
func peakOverPrompt(b *testing.B, mode string, size int) float64 {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envMemoryChild+"="+mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	var url string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "url "); ok {
			url = u
			break
		}
	}
	if url == "" {
		b.Fatal("the child said no url")
	}
	go io.Copy(io.Discard, out)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := proctest.Prompt(ctx, url, testKey, "", "link:warm", "hello"); err != nil {
		b.Fatal(err)
	}
	before, err := proctest.Status(cmd.Process.Pid, "VmHWM")
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("0123456789abcdef", size/16)
	if err := proctest.Prompt(ctx, url, testKey, "", "link:big", text); err != nil {
		b.Fatal(err)
	}
	after, err := proctest.Status(cmd.Process.Pid, "VmHWM")
	if err != nil {
		b.Fatal(err)
	}
	return float64(after-before) / float64(size)
}

// BenchmarkPromptPeakRSS reports how much a server's peak resident
// memory grows, over the prompt's size, with one prompt of 8 and 31 MB:
// "decode" is the endpoint and acp alone (an agent that answers at
// once), "harness" the whole turn (stored, read back, sent to a model).
// Each figure is the median of b.N fresh server processes.
func BenchmarkPromptPeakRSS(b *testing.B) {
	for _, mode := range []string{"decode", "harness"} {
		for _, mb := range []int{8, 31} {
			b.Run(fmt.Sprintf("%s/%dMB", mode, mb), func(b *testing.B) {
				var ratios []float64
				for b.Loop() {
					ratios = append(ratios, peakOverPrompt(b, mode, mb<<20))
				}
				sort.Float64s(ratios)
				b.ReportMetric(ratios[len(ratios)/2], "peakRSS/prompt")
			})
		}
	}
}
