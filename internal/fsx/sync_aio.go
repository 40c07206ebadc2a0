//go:build linux && (amd64 || arm64)

package fsx

import (
	"log/slog"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Datasync flushes f's data, and its size if it grew, to the disk: on
// Linux fdatasync, which skips the times no read needs.
//
// A goroutine in fdatasync(2) keeps its P, its right to run Go code,
// until the runtime's monitor takes it back, after 20 µs at the soonest
// and 10 ms at the latest (the monitor sleeps longer the less it finds
// to do). With two cores and many turns at once, two turns waiting for
// the disk stall every turn ready to run: the CPU idles while the disk
// waits on too few flushes, the next turns' flushes not yet asked for.
// So while another flush of this process is under way, Datasync hands
// its flush to the kernel as an asynchronous request (Linux AIO's
// IOCB_CMD_FDSYNC, run by a kernel worker) and waits on a channel for
// its completion, which one goroutine reads from an eventfd in the
// runtime's poller: no P is held while the disk works. A flush alone
// (one conversation at a time, a quiet process) calls fdatasync(2)
// itself, as before: the request's two wake-ups (the kernel's worker,
// then the poller's thread) cost it nothing it would win, and under a
// loaded machine each wake-up waits for a core. Where the kernel refuses
// AIO (built without it, a seccomp filter, its contexts used up) every
// flush calls fdatasync(2).
func Datasync(f Handle) error { return syncFile(f, iocbCmdFdsync) }

// Fsync flushes f to the disk as f.Sync does (fsync(2)), the same way
// Datasync does: a folder's, for the names made, renamed or removed in it.
func Fsync(f Handle) error { return syncFile(f, iocbCmdFsync) }

func syncFile(f Handle, cmd uint16) error {
	s := aio()
	if inFlight.Add(1) == 1 {
		s = nil // alone: fdatasync(2) itself
	}
	defer inFlight.Add(-1)
	return syncVia(s, f, cmd)
}

// syncVia flushes f (cmd) by a request to s, or by fdatasync(2) or
// fsync(2) itself where s is nil or refuses it.
func syncVia(s *syncer, f Handle, cmd uint16) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var done chan int64
	cerr := rc.Control(func(fd uintptr) {
		if s != nil {
			done = s.submit(fd, cmd)
		}
		if done == nil {
			err = blockingSync(fd, cmd)
		}
	})
	if cerr != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: cerr}
	}
	if done != nil {
		// The kernel holds its own reference to the file until the
		// request completes; f is kept open for it regardless.
		switch res := <-done; {
		case res == redo:
			// The completions can't be read: flush it here instead.
			if cerr := rc.Control(func(fd uintptr) { err = blockingSync(fd, cmd) }); cerr != nil {
				err = cerr
			}
		case res < 0:
			err = syscall.Errno(-res)
		}
		<-s.places
		runtime.KeepAlive(f)
	}
	if err != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: err}
	}
	return nil
}

// blockingSync is fdatasync(2) or fsync(2), where AIO isn't had.
func blockingSync(fd uintptr, cmd uint16) error {
	for {
		var err error
		if cmd == iocbCmdFdsync {
			err = unix.Fdatasync(int(fd))
		} else {
			err = unix.Fsync(int(fd))
		}
		if err != unix.EINTR {
			return err
		}
	}
}

// iocb is the kernel's struct iocb (linux/aio_abi.h), on a
// little-endian 64-bit machine.
type iocb struct {
	data     uint64
	key      uint32
	rwFlags  uint32
	opcode   uint16
	reqprio  int16
	fd       uint32
	buf      uint64
	nbytes   uint64
	offset   int64
	reserved uint64
	flags    uint32
	resfd    uint32
}

// ioEvent is the kernel's struct io_event: a request's completion.
type ioEvent struct {
	data uint64
	obj  uint64
	res  int64
	res2 int64
}

const (
	iocbCmdFsync  = 2
	iocbCmdFdsync = 3
	iocbFlagResfd = 1 << 0

	// aioDepth is how many flushes the process has waiting at once; one
	// more waits for a place.
	aioDepth = 128

	// redo is the result handed to a request whose completion can't be
	// read (io_getevents failed): its waiter flushes the file itself.
	redo = math.MinInt64
)

// syncer is the process's AIO context, whose completions one goroutine
// hands to the requests' waiters.
type syncer struct {
	ctx    uintptr       // aio_context_t
	efd    int           // the eventfd each completion adds 1 to
	events *os.File      // efd, read through the poller
	places chan struct{} // a place taken for each request in flight

	mu      sync.Mutex
	next    uint64
	waiting map[uint64]chan int64 // by request
	broken  bool                  // completions can't be read: no more requests

	// getEvents is io_getevents(2) on ctx, set before reap starts.
	getEvents func(minNr int, events []ioEvent, timeout *unix.Timespec) (int, syscall.Errno)
}

// inFlight is how many flushes this process has under way, by either
// way.
var inFlight atomic.Int64

var (
	syncerOnce sync.Once
	theSyncer  *syncer // nil where the kernel refuses AIO
)

// aio is the process's syncer, set up at its first use.
func aio() *syncer {
	syncerOnce.Do(func() { theSyncer = newSyncer() })
	return theSyncer
}

// newSyncer sets up an AIO context and its eventfd and starts the
// goroutine that reaps completions; nil where the kernel refuses either.
func newSyncer() *syncer {
	s := setUpSyncer()
	if s != nil {
		go s.reap()
	}
	return s
}

// setUpSyncer is newSyncer without the reaping goroutine started.
func setUpSyncer() *syncer {
	var ctx uintptr
	if _, _, e := unix.Syscall(unix.SYS_IO_SETUP, aioDepth, uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
		return nil
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Syscall(unix.SYS_IO_DESTROY, ctx, 0, 0)
		return nil
	}
	s := &syncer{
		ctx:     ctx,
		efd:     efd,
		events:  os.NewFile(uintptr(efd), "aio completions"), // non-blocking: in the poller
		places:  make(chan struct{}, aioDepth),
		waiting: make(map[uint64]chan int64),
	}
	s.getEvents = func(minNr int, events []ioEvent, timeout *unix.Timespec) (int, syscall.Errno) {
		n, _, e := unix.Syscall6(unix.SYS_IO_GETEVENTS, s.ctx, uintptr(minNr), uintptr(len(events)),
			uintptr(unsafe.Pointer(&events[0])), uintptr(unsafe.Pointer(timeout)), 0)
		return int(n), e
	}
	return s
}

// submit asks the kernel to flush fd (cmd, IOCB_CMD_FDSYNC or FSYNC) and
// returns the channel its result comes on, a negative errno for an
// error, its place in s.places taken until then; nil if the kernel refused the request, which then wasn't made
// (io_submit fails for a file that can't be flushed, and with EAGAIN
// when the kernel is out of memory for it).
func (s *syncer) submit(fd uintptr, cmd uint16) chan int64 {
	s.places <- struct{}{}
	done := make(chan int64, 1)
	s.mu.Lock()
	if s.broken {
		s.mu.Unlock()
		<-s.places
		return nil
	}
	s.next++
	id := s.next
	s.waiting[id] = done
	s.mu.Unlock()
	cb := &iocb{data: id, opcode: cmd, fd: uint32(fd), flags: iocbFlagResfd, resfd: uint32(s.efd)}
	cbs := [1]*iocb{cb}
	for {
		n, _, e := unix.Syscall(unix.SYS_IO_SUBMIT, s.ctx, 1, uintptr(unsafe.Pointer(&cbs[0])))
		if e == unix.EINTR {
			continue
		}
		runtime.KeepAlive(cb)
		if e == 0 && n == 1 {
			return done
		}
		s.mu.Lock()
		delete(s.waiting, id)
		s.mu.Unlock()
		<-s.places
		return nil
	}
}

// stop gives up on s after io_getevents failed with e (never seen: only
// a bad context or buffer fails it). Every request waiting is handed redo,
// its waiter flushing the file with fdatasync(2) itself, which is safe
// whether or not the kernel also did, and no request is made again: one
// failure costs the process its flushes by AIO, never a flush or the
// process.
func (s *syncer) stop(e syscall.Errno) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broken = true
	for id, done := range s.waiting {
		delete(s.waiting, id)
		done <- redo
	}
	slog.Warn("fsx: AIO completions can't be read; flushing with fdatasync(2) from now on", "io_getevents", e.Error())
}

// reap waits, in the poller, for the eventfd to count completions, then
// takes them from the context without waiting (io_getevents with a zero
// timeout) and hands each its waiter.
func (s *syncer) reap() {
	var count [8]byte
	events := make([]ioEvent, 64)
	var zero unix.Timespec
	wait := &zero
	for {
		if wait != nil {
			if _, err := s.events.Read(count[:]); err != nil {
				// Never seen: an eventfd's read fails only for a bad
				// buffer. Wait in io_getevents instead, holding a P.
				wait = nil
			}
		}
		minNr := 0
		if wait == nil {
			minNr = 1
		}
		for {
			n, e := s.getEvents(minNr, events, wait)
			if e == unix.EINTR {
				continue
			}
			if e != 0 {
				s.stop(e)
				return
			}
			s.mu.Lock()
			for _, ev := range events[:n] {
				if done, ok := s.waiting[ev.data]; ok {
					delete(s.waiting, ev.data)
					done <- ev.res
				}
			}
			s.mu.Unlock()
			if n < len(events) {
				break
			}
		}
	}
}
