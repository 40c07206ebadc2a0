package delivery

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
)

// A sending file let go by the turn that held it isn't removed: it is
// kept as a spare for the next hold, renamed to the name that hold will
// have: <id>.json, the id of its conversation's next answer, chosen at
// the let-go. That conversation's next hold writes its answer, under that
// id, into the spare where it is: one write, no rename. A hold of a
// conversation with no spare of its own takes another's and renames it
// to its id, or makes a file when there is none (spares.take).
// Every conversation's holds share chats/sending, and a file made and
// removed there costs about three times a rename pair (the folder's lock
// held while an inode is made and freed): 10% of a turn's CPU with 64
// conversations at once; each rename takes the folder's lock too
// (docs/decisions/065).
//
// A spare still holds the answer it held last, under that answer's id,
// so two things keep it from ever being read as an answer again:
//   - a hold is read only under its own id (holds: the file's id must be
//     its name's), so a spare reads as another id's and is passed over,
//     and so does a hold whose new bytes never reached the disk (a
//     machine's stop after the write, before the page's write-back);
//   - a hold ends in a checksum of every byte before it (holdSum), so
//     one whose new bytes reached the disk only in part, the rest the old
//     answer's, is passed over too.
//
// A process's kill leaves the page cache whole: the write is done before
// the event is stored, so the hold holds the new answer. Where a file
// stays open when renamed (keepOpen), a spare stays open, and the hold
// asks the file whether it still has a name once written (a hold into a
// file removed would be nowhere) and is made anew if not. A listing
// removes a file that reads as no answer of its own id (a killed
// process's spare, a hold a machine's stop left cut) not written for
// staleSpare; this process writes into no spare of its own older than
// half that, so none it writes into is removed under it. Spares named
// .spare-<random> (spareName) are an older Link's, removed the same way.

// spareName begins the name of an older Link's spare: never an id's
// (release refuses an id that begins with a dot), never ".json" at its
// end.
const spareName = ".spare-"

// maxSpare is the largest file kept as a spare: a longer answer's is
// removed, so no hold writes more than a page of padding.
const maxSpare = 4096

// maxSpares bounds how many spares one agent's answers keep.
const maxSpares = 256

// staleSpare is how old a spare's last write is when a listing removes
// it: a process killed leaves its own, and one whose owner still lives
// writes into none past half of it (holdInto).
const staleSpare = time.Hour

// errStaleSpare refuses a spare not written for half of staleSpare.
var errStaleSpare = errors.New("a spare near staleSpare, which a listing may remove")

// spare is one spare file of this process: the id its name is (the
// hold it will be), its size, when it was last written, and where a
// file renamed while open stays open (keepOpen) the file, open for
// writing: the hold that takes it is then one write, with no open and
// no look at the folder.
type spare struct {
	id      string
	size    int
	written time.Time
	f       *os.File // nil when closed
	kept    uint64   // its order among the spares kept (spares.put)
}

// folder is the folder of the conversation sp is named for.
func (sp spare) folder() string {
	name, _, _ := strings.Cut(sp.id, idSep)
	return name
}

// close closes sp's file, if it is open.
func (sp *spare) close() {
	if sp.f != nil {
		sp.f.Close()
		sp.f = nil
	}
}

// maxOpenSpares bounds the spares this process keeps open between holds,
// of every agent: past it a spare put by is closed, and opened by its
// name at its next hold, so many agents' spares never take the
// descriptors the process has. A hold's own file is open while it is
// sent, one for each answer on its way.
const maxOpenSpares = 256

// openSpares is how many spares kept between holds are open, of every
// agent's (spares.put, take).
var openSpares atomic.Int64

// The calls on names a hold and its let-go make (a test's to count).
var (
	openFile   = fsx.Open
	renameFile = fsx.Rename
	lstat      = os.Lstat
)

// spares are an agent's spares, by the folder of the conversation each
// is named for, taken by a hold and given back at its let-go.
type spares struct {
	mu     sync.Mutex
	free   map[string][]spare
	n      int
	kept   uint64          // how many were ever kept: each spare's order
	lost   map[string]bool // the folders one of whose spares another took
	closed bool
}

// take takes a spare for a hold in folder: one named for it; else, for
// a conversation none of whose spares was taken by another, the one kept
// last, of any conversation (renamed at the hold); false for none, the
// hold made anew. A file made costs far more than a rename (ext4 looks
// for a free inode past those freed lately), so a new conversation takes
// the spare of the one answered last, which many new ones in turn never
// answer again. A conversation whose spare another took makes its own:
// taking another's in turn would leave that one's owner none, and so on
// at every turn of many conversations taking turns.
func (s *spares) take(folder string) (spare, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.free[folder]
	if len(list) == 0 {
		if s.lost[folder] {
			delete(s.lost, folder)
			return spare{}, false
		}
		var last uint64
		for name, l := range s.free {
			if k := l[len(l)-1].kept; list == nil || k > last {
				folder, list, last = name, l, k
			}
		}
		if len(list) > 0 {
			if s.lost == nil || len(s.lost) >= 4*maxSpares {
				s.lost = map[string]bool{}
			}
			s.lost[folder] = true
		}
	}
	if len(list) == 0 {
		return spare{}, false
	}
	sp := list[len(list)-1]
	if len(list) == 1 {
		delete(s.free, folder)
	} else {
		s.free[folder] = list[:len(list)-1]
	}
	s.n--
	return s.taken(sp), true
}

// taken is sp as it leaves the spares kept: no longer counted open.
func (s *spares) taken(sp spare) spare {
	if sp.f != nil {
		openSpares.Add(-1)
	}
	return sp
}

// put keeps sp, or says no when there are enough or the answers closed.
func (s *spares) put(sp spare) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.n >= maxSpares {
		return false
	}
	if sp.f != nil && openSpares.Add(1) > maxOpenSpares {
		openSpares.Add(-1)
		sp.close()
	}
	if s.free == nil {
		s.free = map[string][]spare{}
	}
	s.kept++
	sp.kept = s.kept
	s.free[sp.folder()] = append(s.free[sp.folder()], sp)
	s.n++
	return true
}

// has says whether id is a spare's name: no answer's, as long as it is
// one.
func (s *spares) has(id string) bool {
	name, _, _ := strings.Cut(id, idSep)
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.free[name], func(sp spare) bool { return sp.id == id })
}

// encodeHold is what a sending file holds: k's JSON, its checksum last
// (`,"sum":"xxxxxxxx"}`, the CRC-32C of every byte before it), padded
// with spaces to at least size, so a spare written over keeps no byte of
// the longer answer it held.
func encodeHold(k Answer, size int) ([]byte, error) {
	b, err := appendAnswer(make([]byte, 0, max(size, 192+len(k.Text))), k)
	if err != nil {
		return nil, err
	}
	sum := crc32.Checksum(b, castagnoli)
	var hx [4]byte
	hx[0], hx[1], hx[2], hx[3] = byte(sum>>24), byte(sum>>16), byte(sum>>8), byte(sum)
	b = append(b, sumKey...)
	b = hex.AppendEncode(b, hx[:])
	b = append(b, '"', '}')
	for len(b) < size {
		b = append(b, ' ')
	}
	return b, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sumKey precedes a hold's checksum; the checksum's eight hex digits and
// `"}` follow it.
const sumKey = `,"sum":"`

// sumTail is how long a hold's end is from its checksum's key on.
const sumTail = len(sumKey) + 8 + 2

// parseHold reads a sending file of id: the answer it holds, and false
// when it holds none of id's: not JSON, another id's or another
// folder's, or a checksum that disagrees with its bytes (a spare written
// over in part, or none at all).
func parseHold(b []byte, id string) (Answer, bool) {
	b = bytes.TrimRight(b, " ")
	if n := len(b) - sumTail; n > 0 && string(b[n:n+len(sumKey)]) == sumKey && b[len(b)-2] == '"' && b[len(b)-1] == '}' {
		var hx [4]byte
		if _, err := hex.Decode(hx[:], b[n+len(sumKey):len(b)-2]); err != nil {
			return Answer{}, false
		}
		sum := uint32(hx[0])<<24 | uint32(hx[1])<<16 | uint32(hx[2])<<8 | uint32(hx[3])
		if crc32.Checksum(b[:n], castagnoli) != sum {
			return Answer{}, false
		}
	} else {
		return Answer{}, false // no checksum, or one out of its place
	}
	var k Answer
	if json.Unmarshal(b, &k) != nil || k.ID != id {
		return Answer{}, false
	}
	if name, err := contract.ThreadFolder(k.Thread); err != nil || !strings.HasPrefix(id, name+idSep) || len(id) == len(name+idSep) {
		return Answer{}, false
	}
	return k, true
}

// holdInto writes k into sp, renamed to k's id when it is named for
// another, and returns it as its let-go makes a spare of it. A spare
// kept open is written where it is open: it was made in chats/sending
// when that was no link (hold), and a rename by name moves nothing of
// another folder's, so neither needs a look at the folder; one that
// isn't is opened, never through a link. Any failure removes the spare
// (the hold is then made anew).
func (a *Answers) holdInto(sp spare, k Answer) (spare, error) {
	name, path := a.sendingPath(sp.id), a.sendingPath(k.ID)
	b, err := encodeHold(k, sp.size)
	if err == nil && time.Since(sp.written) > staleSpare/2 {
		err = errStaleSpare
	}
	f, kept := sp.f, sp.f != nil
	if err == nil && !kept {
		if err = a.sendingNoLink(); err == nil {
			f, err = openFile(name, os.O_WRONLY, 0) // gone: a listing found it stale
		}
	}
	if err == nil {
		_, err = f.WriteAt(b, 0)
	}
	if err == nil && kept && !linked(f) {
		err = fs.ErrNotExist // removed while kept: what was written is nowhere
	}
	if err == nil && !kept && !keepOpen {
		err = f.Close() // before its rename: Windows renames no file open
		f = nil
	}
	if err == nil && name != path {
		err = renameFile(name, path)
	}
	if err != nil {
		if kept {
			sp.close()
		} else if f != nil {
			f.Close()
		}
		os.Remove(name)
		return spare{}, err
	}
	return spare{id: k.ID, size: len(b), written: time.Now(), f: f}, nil
}

// letGo lets this process's own hold of id go, its file h: renamed to
// the id of its conversation's next answer, a spare for that answer's
// hold, or removed when there are enough, it is too long, or the answers
// closed.
func (a *Answers) letGo(id string, h spare) error {
	if !strings.Contains(id, idSep) || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		h.close()
		return nil
	}
	if h.size <= 0 || h.size > maxSpare {
		h.close()
		return a.release(id)
	}
	name, _, _ := strings.Cut(id, idSep)
	sp := spare{id: name + idSep + randomHex(12), size: h.size, written: h.written, f: h.f}
	err := renameFile(a.sendingPath(id), a.sendingPath(sp.id))
	if errors.Is(err, fs.ErrNotExist) {
		sp.close()
		return nil // adopted by a recover, or never made
	}
	if err != nil {
		sp.close()
		return a.release(id)
	}
	if !a.spares.put(sp) {
		sp.close()
		os.Remove(a.sendingPath(sp.id))
	}
	return nil
}

// Close removes the spares this process keeps; a hold let go after it
// is removed.
func (a *Answers) Close() error {
	a.spares.mu.Lock()
	free := a.spares.free
	a.spares.free, a.spares.n, a.spares.closed = nil, 0, true
	a.spares.mu.Unlock()
	var errs []error
	for _, list := range free {
		for _, sp := range list {
			sp = a.spares.taken(sp)
			sp.close()
			if err := os.Remove(a.sendingPath(sp.id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// removeStale removes e of the sending folder dir, a file that reads as
// no answer of its own id (a spare, an older Link's too), when its last
// write is older than staleSpare.
func (a *Answers) removeStale(dir string, e fs.DirEntry) {
	info, err := e.Info()
	if err == nil && info.Mode().IsRegular() && time.Since(info.ModTime()) > staleSpare {
		os.Remove(filepath.Join(dir, e.Name()))
	}
}
