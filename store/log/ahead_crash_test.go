package log_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// The environment of TestCrashBegin's writer: the conversations folder,
// and the number of the first conversation it begins.
const (
	envBeginChats = "LNK_LOG_TEST_BEGIN_CHATS"
	envBeginFrom  = "LNK_LOG_TEST_BEGIN_FROM"
)

// TestCrashBegin kills, again and again at a random moment, a writer that
// begins one conversation after another with folders made ahead (a turn's
// lease, then two events), and after each kill proves every event it was
// told was written is there, as written, in the conversation it was
// written to: a kill while a folder is made ahead, taken or written to
// loses no accepted event, and the next writer begins conversations as
// before. A folder a kill cut short while it was made ahead is carried on
// by the next writer's: at most one is left (.ahead-new), and nothing
// else but the conversations and the one made ahead.
func TestCrashBegin(t *testing.T) {
	if os.Getenv(envBeginChats) != "" {
		beginWriter(t)
		return
	}
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	chats := t.TempDir()
	acked := map[int]int64{} // conversation → its last event acknowledged
	next := 0
	deadline := time.Now().Add(20 * time.Second)
	kills := 0
	for ; kills < 25 && time.Now().Before(deadline); kills++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashBegin$", "-test.count=1")
		cmd.Env = append(os.Environ(), envBeginChats+"="+chats, envBeginFrom+"="+strconv.Itoa(next))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		ack := func(line string) {
			var i int
			var seq int64
			if _, err := fmt.Sscanf(line, "ack %d %d", &i, &seq); err != nil {
				t.Fatalf("writer said %q", line)
			}
			acked[i] = max(acked[i], seq)
			next = max(next, i+1)
		}
		// Some acknowledgements, then a random moment more (below): mostly
		// in the middle of a conversation's beginning or its events.
		for want := 1 + rng.IntN(10); want > 0; want-- {
			select {
			case line, ok := <-lines:
				if !ok {
					cmd.Wait()
					t.Fatalf("writer ended: %s", stderr.String())
				}
				ack(line)
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("writer acknowledged nothing in 20s: %s", stderr.String())
			}
		}
		// The kill's moment: up to 2 ms more of the writer's work, its
		// acknowledgements read as they come.
		moment := time.NewTimer(time.Duration(rng.IntN(2000)) * time.Microsecond)
	work:
		for {
			select {
			case <-moment.C:
				break work
			case line, ok := <-lines:
				if !ok {
					cmd.Wait()
					t.Fatalf("writer ended: %s", stderr.String())
				}
				ack(line)
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for line := range lines {
			ack(line)
		}
		cmd.Wait()
		next++ // the one it was beginning may be half begun: the next writer begins another
		checkBegun(t, chats, acked)
	}
	if kills == 0 {
		t.Fatal("no writer was killed")
	}
	// After the kills, conversations begin and read as before.
	d := openAhead(t, chats)
	for i := next; i < next+3; i++ {
		th := "telegram:" + strconv.Itoa(i)
		if _, err := d.Lease(context.Background(), th, "after", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := d.Append(context.Background(), th, storetest.Event(1, th)); err != nil {
			t.Fatal(err)
		}
		acked[i] = 1
	}
	d.WaitAhead()
	checkBegun(t, chats, acked)
	entries, _ := os.ReadDir(chats)
	for _, e := range entries {
		if _, err := contract.FolderThread(e.Name()); err != nil && e.Name() != log.AheadFolder && e.Name() != log.AheadFolder+"-new" {
			t.Errorf("%s left in the conversations folder", e.Name())
		}
	}
	t.Logf("%d kills, %d conversations begun", kills, len(acked))
}

// checkBegun proves each conversation of acked holds its events from the
// first to the last acknowledged, as written, and is the log's.
func checkBegun(t *testing.T, chats string, acked map[int]int64) {
	t.Helper()
	d := log.Open(chats)
	for i, last := range acked {
		th := "telegram:" + strconv.Itoa(i)
		es, err := d.Read(context.Background(), th, 1)
		if err != nil {
			t.Fatalf("%s: %v", th, err)
		}
		if int64(len(es)) < last {
			t.Fatalf("%s: %d events, but #%d was acknowledged", th, len(es), last)
		}
		for _, e := range es {
			if !storetest.Equal(e, storetest.Event(e.Seq, th)) {
				t.Fatalf("%s: #%d isn't as written: %+v", th, e.Seq, e)
			}
		}
		dir := filepath.Join(chats, "telegram-"+strconv.Itoa(i))
		if kind, err := driver.Of(dir); kind != log.Name || err != nil {
			t.Fatalf("%s: kept %q (%v), not as a log", th, kind, err)
		}
	}
}

// beginWriter is TestCrashBegin's writer: from the conversation its
// environment says, it begins one after another as a turn does (the
// lease, two events, the lease let go), saying "ack <conversation>
// <event>" once each event is written, until it is killed.
func beginWriter(t *testing.T) {
	chats := os.Getenv(envBeginChats)
	from, _ := strconv.Atoi(os.Getenv(envBeginFrom))
	d := log.Open(chats).MakeAhead("chat.md")
	ctx := context.Background()
	for i := from; i < from+100000; i++ {
		th := "telegram:" + strconv.Itoa(i)
		if _, err := d.Lease(ctx, th, "writer", time.Minute); err != nil {
			t.Fatal(err)
		}
		for seq := int64(1); seq <= 2; seq++ {
			if err := d.Append(ctx, th, storetest.Event(seq, th)); err != nil {
				t.Fatal(err)
			}
			fmt.Printf("ack %d %d\n", i, seq)
		}
		if err := d.Release(ctx, th, "writer"); err != nil {
			t.Fatal(err)
		}
	}
}
