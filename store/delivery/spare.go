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
	"strings"
	"sync"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
)

// A sending file let go by the turn that held it isn't removed: it is
// renamed to a spare (spareName, in the same folder) and kept for the
// next hold, which writes its answer into it in place and renames it to
// the new id's name. Every conversation's holds share chats/sending, and
// a file made and removed there costs about three times a rename pair
// (the folder's lock held while an inode is made and freed): 10% of a
// turn's CPU with 64 conversations at once. Where a file renamed while
// open stays open (keepOpen), a spare stays open too, so a hold is one
// write and one rename and its let-go one rename (docs/decisions/065).
//
// A spare still holds the answer it held last, so two things keep it
// from ever being read as an answer again:
//   - a hold is read only under its own id (holds: the file's id must be
//     its name's), so a spare renamed in whose new bytes never reached
//     the disk (a machine's stop after the rename's commit, before the
//     write's) reads as another id's and is passed over;
//   - a hold ends in a checksum of every byte before it (holdSum), so
//     one whose new bytes reached the disk only in part, the rest the old
//     answer's, is passed over too.
//
// A process's kill leaves the page cache whole: the write is done before
// the rename, so the new name holds the new answer. The spares a killed
// process leaves are removed by the next listing past staleSpare.

// spareName begins the name of a spare: never an id's (release refuses
// an id that begins with a dot), never ".json" at its end.
const spareName = ".spare-"

// maxSpare is the largest file kept as a spare: a longer answer's is
// removed, so no hold writes more than a page of padding.
const maxSpare = 4096

// maxSpares bounds how many spares one agent's answers keep.
const maxSpares = 256

// staleSpare is how old a spare's last write is when a listing removes
// it: a process killed leaves its own, and one whose owner still lives
// finds it gone and makes a file anew.
const staleSpare = time.Hour

// spare is one spare file of this process: its name in chats/sending,
// its size, and where a file renamed while open stays open (keepOpen)
// the file, open for writing: the hold that takes it is then one write
// and one rename, with no open and no look at the folder.
type spare struct {
	name string
	size int
	f    *os.File // nil when closed
}

// close closes sp's file, if it is open.
func (sp *spare) close() {
	if sp.f != nil {
		sp.f.Close()
		sp.f = nil
	}
}

// The calls on names a hold and its let-go make (a test's to count).
var (
	openFile   = fsx.Open
	renameFile = fsx.Rename
	lstat      = os.Lstat
)

// spares are an agent's spares, taken by a hold and given back at its
// let-go.
type spares struct {
	mu     sync.Mutex
	free   []spare
	closed bool
}

func (s *spares) take() (spare, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.free) == 0 {
		return spare{}, false
	}
	sp := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	return sp, true
}

// put keeps sp, or says no when there are enough or the answers closed.
func (s *spares) put(sp spare) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.free) >= maxSpares {
		return false
	}
	s.free = append(s.free, sp)
	return true
}

// encodeHold is what a sending file holds: k's JSON, its checksum last
// (`,"sum":"xxxxxxxx"}`, the CRC-32C of every byte before it), padded
// with spaces to at least size, so a spare written over keeps no byte of
// the longer answer it held.
func encodeHold(k Answer, size int) ([]byte, error) {
	b, err := json.Marshal(k)
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1] // its closing brace
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

// holdInto writes k into sp and renames it to path: the hold made of a
// spare, returned as its let-go makes a spare of it. A spare kept open
// is written where it is open: it was made in chats/sending when that
// was no link (hold), and a rename by name moves nothing of another
// folder's, so neither needs a look at the folder; one that isn't is
// opened, never through a link. Any failure removes the spare (the hold
// is then made anew).
func (a *Answers) holdInto(sp spare, path string, k Answer) (spare, error) {
	name := filepath.Join(filepath.Dir(path), sp.name)
	b, err := encodeHold(k, sp.size)
	if err == nil && sp.f == nil {
		if err = a.sendingNoLink(); err == nil {
			sp.f, err = openFile(name, os.O_WRONLY, 0) // gone: a listing found it stale
		}
	}
	if err == nil {
		_, err = sp.f.WriteAt(b, 0)
	}
	if err == nil {
		err = renameFile(name, path)
	}
	if err == nil && !keepOpen {
		err = sp.f.Close()
		sp.f = nil
	}
	if err != nil {
		sp.close()
		os.Remove(name)
		return spare{}, err
	}
	return spare{size: len(b), f: sp.f}, nil
}

// letGo lets this process's own hold of id go, its file h: renamed to a
// spare for the next hold, or removed when there are enough, it is too
// long, or the answers closed.
func (a *Answers) letGo(id string, h spare) error {
	if !strings.Contains(id, idSep) || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		h.close()
		return nil
	}
	if h.size <= 0 || h.size > maxSpare {
		h.close()
		return a.release(id)
	}
	path := a.sendingPath(id)
	sp := spare{name: spareName + randomHex(8), size: h.size, f: h.f}
	err := renameFile(path, filepath.Join(filepath.Dir(path), sp.name))
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
		os.Remove(filepath.Join(filepath.Dir(path), sp.name))
	}
	return nil
}

// Close removes the spares this process keeps; a hold let go after it
// is removed.
func (a *Answers) Close() error {
	a.spares.mu.Lock()
	free := a.spares.free
	a.spares.free, a.spares.closed = nil, true
	a.spares.mu.Unlock()
	var errs []error
	for _, sp := range free {
		sp.close()
		if err := os.Remove(filepath.Join(a.Paths.Chats(), SendingDir, sp.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeStale removes the spare e of the sending folder dir when its last
// write is older than staleSpare.
func (a *Answers) removeStale(dir string, e fs.DirEntry) {
	info, err := e.Info()
	if err == nil && info.Mode().IsRegular() && time.Since(info.ModTime()) > staleSpare {
		os.Remove(filepath.Join(dir, e.Name()))
	}
}
