package log_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/store/log"
)

// fsTopdirFL is FS_TOPDIR_FL (chattr +T).
const fsTopdirFL = 0x00020000

// folderFlags are dir's inode flags (FS_IOC_GETFLAGS).
func folderFlags(t testing.TB, dir string) (uint32, error) {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
}

// needTopdir skips a test where the file system of the test's folders
// keeps no FS_TOPDIR_FL (tmpfs, btrfs), saying so.
func needTopdir(t testing.TB) {
	t.Helper()
	dir := t.TempDir()
	log.SpreadFolders(dir)
	if flags, err := folderFlags(t, dir); err != nil || flags&fsTopdirFL == 0 {
		t.Skipf("the file system of %s keeps no FS_TOPDIR_FL (%v)", dir, err)
	}
}

// TestMadeAheadSpread: a driver that makes folders ahead marks its
// conversations folder as the top of unrelated folders before it makes
// the first, so ext4 spreads them over its block groups; the flags it had
// are kept.
func TestMadeAheadSpread(t *testing.T) {
	needTopdir(t)
	ctx := context.Background()
	chats := t.TempDir()
	before, err := folderFlags(t, chats)
	if err != nil {
		t.Fatal(err)
	}
	if before&fsTopdirFL != 0 {
		t.Fatal("a new folder is marked already")
	}
	d := openAhead(t, chats)
	if _, err := d.Lease(ctx, "telegram:1", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := d.Release(ctx, "telegram:1", "h"); err != nil {
		t.Fatal(err)
	}
	d.WaitAhead()
	if _, err := os.Lstat(filepath.Join(chats, log.AheadFolder)); err != nil {
		t.Fatalf("no folder made ahead: %v", err)
	}
	after, err := folderFlags(t, chats)
	if err != nil {
		t.Fatal(err)
	}
	if after != before|fsTopdirFL {
		t.Fatalf("the conversations folder's flags are %#x, want %#x", after, before|fsTopdirFL)
	}
}

// BenchmarkMakeAhead is the making of a folder ahead (a folder of three
// empty files, its names synced) in a conversations folder under
// $TMPDIR, marked as the top of unrelated folders (spread) or not
// (beside): it reports the processor time (user and system) a folder
// took, cpu-us/folder, besides the time. Where other programs make and
// remove many files under $TMPDIR and ext4 keeps no journal, each inode
// made beside them passes over those freed lately.
func BenchmarkMakeAhead(b *testing.B) {
	for _, spread := range []bool{true, false} {
		name := "beside"
		if spread {
			name = "spread"
		}
		b.Run(name, func(b *testing.B) {
			if spread {
				needTopdir(b)
			}
			chats := b.TempDir()
			if spread {
				log.SpreadFolders(chats)
			}
			var start syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &start)
			b.ResetTimer()
			for i := range b.N {
				if err := log.MakeAheadIn(chats, "chat.md"); err != nil {
					b.Fatal(err)
				}
				ahead := filepath.Join(chats, log.AheadFolder)
				if err := os.Rename(ahead, filepath.Join(chats, "telegram-"+strconv.Itoa(i))); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			var end syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &end)
			cpu := time.Duration(end.Utime.Nano() + end.Stime.Nano() - start.Utime.Nano() - start.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/folder")
		})
	}
}
