package file

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestWrite(t *testing.T) {
	eachWay(t, func(t *testing.T) {
		w, dir := space(t)
		ctx := context.Background()
		wr, err := w.Write(ctx, "deep/er/new.md", []byte("a\nb"))
		if err != nil {
			t.Fatal(err)
		}
		if !wr.New || wr.Lines != 2 || wr.Bytes != 3 || wr.Path != "deep/er/new.md" || get(t, filepath.Join(dir, "deep", "er", "new.md")) != "a\nb" {
			t.Fatalf("%+v", wr)
		}
		// An existing file keeps its permissions.
		script := filepath.Join(dir, "run.sh")
		put(t, script, "#!/bin/sh\n")
		os.Chmod(script, 0o750)
		if wr, err = w.Write(ctx, "run.sh", []byte("#!/bin/sh\necho hi\n")); err != nil || wr.New {
			t.Fatal(wr, err)
		}
		fi, _ := os.Stat(script)
		if fi.Mode().Perm() != 0o750 || get(t, script) != "#!/bin/sh\necho hi\n" {
			t.Fatalf("mode %v", fi.Mode())
		}
		if _, err := w.Write(ctx, "deep", []byte("x")); err == nil {
			t.Fatal("a folder written over")
		}
		_, err = w.Write(ctx, ".", []byte("x"))
		mustRefuse(t, err, "a folder, not a file")
		_, err = w.Write(ctx, "big", make([]byte, MaxContent+1))
		mustRefuse(t, err, "at most 8 MiB")
		names, _ := os.ReadDir(dir)
		for _, n := range names {
			if isTempName(n.Name()) {
				t.Fatal("a temporary file left:", n.Name())
			}
		}
	})
}

func TestReplace(t *testing.T) {
	eachWay(t, func(t *testing.T) {
		w, dir := space(t)
		ctx := context.Background()
		name := filepath.Join(dir, "todo.md")
		put(t, name, "# Todo\n\n- buy milk\n- fix the tpyo\n- fix the tpyo\n- call Ann\n")
		_, err := w.Replace(ctx, "todo.md", "buy bread", "x")
		mustRefuse(t, err, "occurs 0 times")
		_, err = w.Replace(ctx, "todo.md", "tpyo", "typo")
		mustRefuse(t, err, "occurs 2 times")
		_, err = w.Replace(ctx, "todo.md", "", "x")
		mustRefuse(t, err, "can't be empty")
		_, err = w.Replace(ctx, "missing.md", "a", "b")
		mustRefuse(t, err, "there is no such file")
		r, err := w.Replace(ctx, "todo.md", "- call Ann\n", "- call Ann\n- call Bob\n")
		if err != nil {
			t.Fatal(err)
		}
		if r.Line != 6 || r.OldLines != 1 || r.NewLines != 2 || r.AroundFrom != 4 || r.Around[len(r.Around)-1] != "- call Bob" {
			t.Fatalf("%+v", r)
		}
		if get(t, name) != "# Todo\n\n- buy milk\n- fix the tpyo\n- fix the tpyo\n- call Ann\n- call Bob\n" {
			t.Fatal(get(t, name))
		}
		put(t, filepath.Join(dir, "dos.txt"), "a\r\nb\r\n")
		_, err = w.Replace(ctx, "dos.txt", "a\nb", "c")
		mustRefuse(t, err, `lines end in "\r\n"`)
		put(t, filepath.Join(dir, "bin"), "a\x00b")
		_, err = w.Replace(ctx, "bin", "a", "c")
		mustRefuse(t, err, "a binary file")
	})
}

// Replaces of one file at once each see the others' changes: every one
// is kept, and of two with the same old text one is refused.
func TestReplaceAtOnce(t *testing.T) {
	eachWay(t, func(t *testing.T) {
		w, dir := space(t)
		const n = 24
		var b strings.Builder
		b.WriteString("header: open\n")
		for i := range n {
			fmt.Fprintf(&b, "item %02d: todo\n", i)
		}
		name := filepath.Join(dir, "list.txt")
		put(t, name, b.String())
		var wg sync.WaitGroup
		errs := make([]error, n+2)
		for i := range n {
			wg.Go(func() {
				_, errs[i] = w.Replace(context.Background(), "list.txt", fmt.Sprintf("item %02d: todo", i), fmt.Sprintf("item %02d: done", i))
			})
		}
		// Two with one old text: one is kept, the other finds it gone.
		for i := n; i < n+2; i++ {
			wg.Go(func() {
				_, errs[i] = w.Replace(context.Background(), "list.txt", "header: open", fmt.Sprintf("header: closed by %d", i))
			})
		}
		wg.Wait()
		for i, err := range errs[:n] {
			if err != nil {
				t.Fatalf("replace %d: %v", i, err)
			}
		}
		refused := 0
		for _, err := range errs[n:] {
			if err != nil {
				mustRefuse(t, err, "occurs 0 times")
				refused++
			}
		}
		got := get(t, name)
		if refused != 1 || strings.Count(got, ": done") != n || strings.Count(got, "header: closed by") != 1 {
			t.Fatalf("%d refused; the file:\n%s", refused, got)
		}
	})
}

// A replace killed halfway through writing the file leaves the old file
// whole; the next write takes away what the killed one left.
func TestReplaceKilled(t *testing.T) {
	w, dir := space(t)
	old := strings.Repeat("0123456789abcdef", 1<<18) + "old\n" // 4 MiB and a bit
	name := filepath.Join(dir, "big.txt")
	put(t, name, old)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killEnv+"="+dir)
	dieWithTest(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "halfway\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the helper said %q, %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := get(t, name); got != old {
		t.Fatalf("the file is %d bytes, not the old %d", len(got), len(old))
	}
	half, err := os.Stat(filepath.Join(dir, tempName("big.txt")))
	if err != nil || half.Size() >= int64(len(old)) {
		t.Fatalf("no half-written temporary file: %v", err)
	}
	if _, err := w.Replace(context.Background(), "big.txt", "old", "new"); err != nil {
		t.Fatal(err)
	}
	if got := get(t, name); got != old[:len(old)-4]+"new\n" {
		t.Fatal("the replace after the kill wrote something else")
	}
	if _, err := os.Stat(filepath.Join(dir, tempName("big.txt"))); !os.IsNotExist(err) {
		t.Fatal("the killed write's temporary file is still there:", err)
	}
}
