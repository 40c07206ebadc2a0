package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// runSamples are each figure's values, one a run, for the harness and
// for its floor.
type runSamples struct {
	order         []string
	harness, base map[string][]float64
	units         map[string]string
}

func (s *runSamples) add(name, unit string, harness float64, floor *float64) {
	if _, ok := s.units[name]; !ok {
		s.order = append(s.order, name)
		s.units[name] = unit
	}
	s.harness[name] = append(s.harness[name], harness)
	if floor != nil {
		s.base[name] = append(s.base[name], *floor)
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
func mb(b int64) float64         { return float64(b) / (1 << 20) }
func ptr(v float64) *float64     { return &v }

// measure runs o.runs runs and gives each figure's median, with its
// floor, ratio and target.
func measure(ctx context.Context, o measureOptions) (report, error) {
	var r report
	r.Machine.OS, r.Machine.Arch, r.Machine.CPUs = runtime.GOOS, runtime.GOARCH, runtime.NumCPU()
	r.Machine.LoadStart = loadAvg()
	r.Runs = o.runs
	s := &runSamples{harness: map[string][]float64{}, base: map[string][]float64{}, units: map[string]string{}}
	// Each run's conversations are named after this measure's start too,
	// so a home measured before (--home) has none of them: a cold message
	// is the first of its conversation, a warm one's conversation as long
	// as in any other measure.
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	for run := range o.runs {
		if err := measureRun(ctx, o, tag+"-"+strconv.Itoa(run), s); err != nil {
			return r, err
		}
	}
	r.Machine.LoadEnd = loadAvg()
	values := map[string]float64{}
	for _, name := range s.order {
		f := figure{Name: name, Unit: s.units[name], Value: median(s.harness[name])}
		values[name] = f.Value
		if b := s.base[name]; len(b) > 0 {
			f.Floor = ptr(median(b))
			if *f.Floor > 0 {
				f.Ratio = ptr(f.Value / *f.Floor)
			}
		}
		r.Figures = append(r.Figures, f)
	}
	r.Figures = append(r.Figures, derived(o, values)...)
	for i := range r.Figures {
		setTarget(&r.Figures[i], values)
	}
	return r, nil
}

// Names of the figures.
const (
	figStart = "start to /health"
	figWarm  = "per message, warm, "
	figCold  = "per message, cold, "
	figTurns = "turns/s, %d at once"
	figRSS   = "idle RSS, %d agents"
	figExtra = "idle RSS per agent past the first"
	figGain  = "turns/s, %d at once over 1 at once"
	figBind  = "blank unit, bind to first answer"
	figCPU   = "CPU a turn, %d at once"
)

// derived are the figures made of others: memory per agent past the
// first, and the gain of turns/s with conversations at once (no target:
// turns/s are each set beside the floor's at the same number instead).
func derived(o measureOptions, v map[string]float64) []figure {
	var out []figure
	lo, hi := o.agentCounts[0], o.agentCounts[len(o.agentCounts)-1]
	if hi > lo {
		out = append(out, figure{Name: figExtra, Unit: "MB", Value: (v[fmt.Sprintf(figRSS, hi)] - v[fmt.Sprintf(figRSS, lo)]) / float64(hi-lo)})
	}
	one := v[fmt.Sprintf(figTurns, o.concs[0])]
	if last := o.concs[len(o.concs)-1]; last > o.concs[0] && one > 0 {
		out = append(out, figure{Name: fmt.Sprintf(figGain, last), Unit: "×", Value: v[fmt.Sprintf(figTurns, last)] / one})
	}
	return out
}

// setTarget names f's target and whether it is met, where it has one.
func setTarget(f *figure, v map[string]float64) {
	met := func(target string, ok bool) { f.Target, f.Met = target, &ok }
	switch {
	case f.Name == figStart:
		met("< 100 ms", f.Value < ms(targetStart))
	case f.Name == fmt.Sprintf(figRSS, 1):
		met("< 20 MB", f.Value < mb(targetRSS))
	case f.Name == fmt.Sprintf(figRSS, 100):
		met("< 120 MB", f.Value < mb(targetRSS100))
	case f.Name == figExtra:
		met("< 1 MB", f.Value < mb(targetRSSExtra))
	case f.Name == figWarm+"p50" && f.Ratio != nil:
		met(fmt.Sprintf("≤ %.1f× floor", targetWarmRatio), *f.Ratio <= targetWarmRatio)
	case f.Name == figCold+"p50" && f.Ratio != nil:
		met(fmt.Sprintf("≤ %.1f× floor", targetFloorRatio), *f.Ratio <= targetFloorRatio)
	case f.Name == figBind:
		met("< 20 ms", f.Value < ms(targetBind))
	case f.Unit == "turns/s" && f.Ratio != nil:
		var n int
		if _, err := fmt.Sscanf(f.Name, figTurns, &n); err == nil && targetTurnsShare[n] > 0 {
			met(fmt.Sprintf("≥ %.1f× floor", targetTurnsShare[n]), *f.Ratio >= targetTurnsShare[n])
		}
	}
}

// measureRun is one run: the floor's figures and the harness's, their
// messages taken in turns, then the memory of each number of agents.
func measureRun(ctx context.Context, o measureOptions, run string, s *runSamples) error {
	floor, h, err := measureServers(ctx, o, run)
	if err != nil {
		return err
	}
	for i, name := range h.order {
		s.add(name, h.units[name], h.values[i], ptr(floor.values[i]))
	}
	bound, err := bindToAnswer(ctx, o, run)
	if err != nil {
		return fmt.Errorf("a blank unit: %w", err)
	}
	// Its floor: the same message, the first of its conversation, to the floor.
	s.add(figBind, "ms", ms(bound), ptr(floor.values[slices.Index(floor.order, figCold+"p50")]))
	for _, n := range o.agentCounts {
		m, err := agentsRSS(ctx, o, run, n)
		if err != nil {
			return fmt.Errorf("%d agents: %w", n, err)
		}
		s.add(fmt.Sprintf(figRSS, n), "MB", mb(m.rss), nil)
	}
	return nil
}

// serverFigures are one server's figures of a run, in order.
type serverFigures struct {
	order  []string
	units  map[string]string
	values []float64
}

func (f *serverFigures) add(name, unit string, v float64) {
	f.order, f.values = append(f.order, name), append(f.values, v)
	f.units[name] = unit
}

// measured is a server measureServers started: its process and its
// agent's connection.
type measured struct {
	p *proc
	a *agentConn
}

// startServer starts the harness for one agent, or the floor, and times
// its start to /health.
func startServer(ctx context.Context, o measureOptions, floor bool) (measured, time.Duration, error) {
	port, err := freePort()
	if err != nil {
		return measured{}, 0, err
	}
	bin, args, env := o.bin, []string{"serve", "--home", o.home, "--port", strconv.Itoa(port), "--key-file", o.keyFile, "--model", "offline"}, measureEnv()
	if floor {
		bin, args, env = o.lnk, []string{"measure", "floor-server", "--key-file", o.keyFile, "--port", strconv.Itoa(port)}, append(env, envMeasureRunLnk+"=1")
	}
	p, d, err := startToHealth(ctx, bin, args, env, port)
	if err != nil {
		return measured{}, 0, err
	}
	return measured{p: p, a: &agentConn{url: "http://127.0.0.1:" + strconv.Itoa(port) + "/acp", key: o.key, agent: "main"}}, d, nil
}

// measureServers starts the floor, then the harness, times each start to
// /health, and then their messages: the same messages to each, in turns
// (the floor's, then the harness's), so a load that comes and goes on the
// machine weighs on both alike; turns a second, the floor's at each
// number of conversations at once, then the harness's.
func measureServers(ctx context.Context, o measureOptions, run string) (floor, harness serverFigures, err error) {
	figs := []*serverFigures{{units: map[string]string{}}, {units: map[string]string{}}}
	var servers []measured
	defer func() {
		for _, m := range servers {
			m.p.stop()
		}
	}()
	for i, isFloor := range []bool{true, false} {
		m, d, err := startServer(ctx, o, isFloor)
		if err != nil {
			if isFloor {
				err = fmt.Errorf("the floor: %w", err)
			}
			return floor, harness, err
		}
		servers = append(servers, m)
		figs[i].add(figStart, "ms", ms(d))
	}
	conns := []*agentConn{servers[0].a, servers[1].a}
	// A few messages first, so what's made once is made.
	for i := range 5 {
		for _, a := range conns {
			if _, err := timeMessage(ctx, a, "link:first-"+run, i); err != nil {
				return floor, harness, err
			}
		}
	}
	warm, err := warmMessages(ctx, conns, run, o.messages)
	if err != nil {
		return floor, harness, err
	}
	cold, err := coldMessages(ctx, conns, run, o.messages)
	if err != nil {
		return floor, harness, err
	}
	for i, f := range figs {
		f.add(figWarm+"p50", "ms", ms(warm[i].p50))
		f.add(figWarm+"p99", "ms", ms(warm[i].p99))
		f.add(figCold+"p50", "ms", ms(cold[i].p50))
		f.add(figCold+"p99", "ms", ms(cold[i].p99))
	}
	for _, c := range o.concs {
		var cpu [2]time.Duration
		cpuOK := true
		for i, a := range conns {
			tps, used, err := turnsPerSecond(ctx, a, run, c, o.turns, servers[i].p.pid())
			if err != nil {
				return floor, harness, err
			}
			figs[i].add(fmt.Sprintf(figTurns, c), "turns/s", tps)
			cpu[i], cpuOK = used, cpuOK && used >= 0
		}
		if cpuOK {
			for i := range figs {
				figs[i].add(fmt.Sprintf(figCPU, c), "µs", float64(cpu[i])/float64(time.Microsecond))
			}
		}
	}
	return *figs[0], *figs[1], nil
}

// agentsRSS starts one process answering n agents (serve --agents, each
// on a free port), leaves it idle, and samples its memory.
func agentsRSS(ctx context.Context, o measureOptions, run string, n int) (memory, error) {
	var file strings.Builder
	for i := range n {
		b, _ := json.Marshal(map[string]any{"name": "agent-" + strconv.Itoa(i), "home": o.home, "port": 0, "key_file": o.keyFile})
		file.Write(append(b, '\n'))
	}
	path := filepath.Join(o.home, "agents-"+run+"-"+strconv.Itoa(n))
	if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
		return memory{}, err
	}
	p, err := startProc(ctx, o.bin, []string{"serve", "--agents", path, "--model", "offline"}, measureEnv())
	if err != nil {
		return memory{}, err
	}
	defer p.stop()
	if _, err := p.waitLines(ctx, n, "endpoint "); err != nil {
		return memory{}, err
	}
	return idleRSS(ctx, p.pid(), o.samples, o.idle)
}

// bindToAnswer starts a blank unit (serve --blank), and times its bind
// (one control line, its answer read) and its first message answered.
func bindToAnswer(ctx context.Context, o measureOptions, run string) (time.Duration, error) {
	ctl := filepath.Join(o.home, "blank-"+run+".sock")
	p, err := startProc(ctx, o.bin, []string{"serve", "--blank", ctl, "--model", "offline"}, measureEnv())
	if err != nil {
		return 0, err
	}
	defer p.stop()
	if _, err := p.waitLines(ctx, 1, "blank "); err != nil {
		return 0, err
	}
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	line, _ := json.Marshal(map[string]any{"agent": "main", "home": o.home, "port": port})
	began := time.Now()
	c, err := net.Dial("unix", ctl)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(append(line, '\n')); err != nil {
		return 0, err
	}
	b, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return 0, fmt.Errorf("bind: %w: %s", err, p.stderr())
	}
	var bound struct{ Endpoint, Key, Error string }
	if err := json.Unmarshal(b, &bound); err != nil || bound.Error != "" || bound.Key == "" {
		return 0, fmt.Errorf("bind answered %q", b)
	}
	if _, err := timeMessage(ctx, &agentConn{url: bound.Endpoint, key: []byte(bound.Key), agent: "main"}, "link:bind-"+run, 0); err != nil {
		return 0, err
	}
	return time.Since(began), nil
}

// envMeasureRunLnk, set, makes a test binary run lnk's command line, so
// lnk measure run as a test starts the floor from it.
const envMeasureRunLnk = "LNK_MEASURE_RUN_LNK"
