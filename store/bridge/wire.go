package bridge

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// call is one decoded request: which call, and its arguments.
type call struct {
	path   string
	thread string
	event  store.Event   // append
	from   int64         // read
	n      int           // latest
	holder string        // lease, release
	ttl    time.Duration // lease
	tools  []string      // narrow
}

// maxTTL bounds a lease asked for: a turn's lease is renewed, never
// taken for days.
const maxTTL = 24 * time.Hour

// maxLatest bounds how many latest events one call asks for.
const maxLatest = 1 << 20

// errBadRequest marks a request that doesn't decode as a call.
var errBadRequest = errors.New("bad request")

// decode reads a proved request's method, request URI and body as a call.
// It refuses what isn't one of the calls with its arguments well formed.
func decode(method, uri string, body []byte) (call, error) {
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return call{}, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return call{}, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	c := call{path: u.Path}
	if err := checkCall(c.path, method, q, body); err != nil {
		return call{}, err
	}
	if c.path == pathPing {
		return c, nil
	}
	c.thread = q.Get("thread")
	if err := contract.CheckThread(c.thread); err != nil {
		return call{}, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	if err := c.readArgs(q, body); err != nil {
		return call{}, err
	}
	return c, nil
}

// checkCall checks a call's shape: path is a call's, taking method, q
// holds its arguments, each once, and nothing else, and only an append
// or a narrowing has a body.
func checkCall(path, method string, q url.Values, body []byte) error {
	want := map[string]string{
		pathAppend: http.MethodPost, pathRead: http.MethodGet, pathLatest: http.MethodGet,
		pathLease: http.MethodPost, pathRelease: http.MethodPost, pathPing: http.MethodGet,
		pathTools: http.MethodGet, pathNarrow: http.MethodPost, pathForget: http.MethodPost,
	}[path]
	if want == "" {
		return fmt.Errorf("%w: no call %q", errBadRequest, path)
	}
	if method != want {
		return fmt.Errorf("%w: %s takes %s, not %s", errBadRequest, path, want, method)
	}
	args := map[string][]string{
		pathAppend: {"thread"}, pathRead: {"thread", "from"}, pathLatest: {"thread", "n"},
		pathLease: {"thread", "holder", "ttl"}, pathRelease: {"thread", "holder"}, pathPing: nil,
		pathTools: {"thread"}, pathNarrow: {"thread"}, pathForget: {"thread"},
	}[path]
	for k, v := range q {
		if !contains(args, k) {
			return fmt.Errorf("%w: %s takes no %q", errBadRequest, path, k)
		}
		if len(v) != 1 {
			return fmt.Errorf("%w: %q given %d times", errBadRequest, k, len(v))
		}
	}
	for _, k := range args {
		if _, ok := q[k]; !ok {
			return fmt.Errorf("%w: %s needs %q", errBadRequest, path, k)
		}
	}
	if path != pathAppend && path != pathNarrow && len(body) > 0 {
		return fmt.Errorf("%w: %s takes no body", errBadRequest, path)
	}
	return nil
}

// readArgs reads what the call at c.path takes of its arguments q and its
// body, each checked: an append's event, a read's first number, latest's
// count, a narrowing's tools, a lease's holder and time.
func (c *call) readArgs(q url.Values, body []byte) error {
	var err error
	switch c.path {
	case pathAppend:
		if len(body) == 0 || body[len(body)-1] != '\n' || bytes.IndexByte(body, '\n') != len(body)-1 {
			return fmt.Errorf("%w: an append's body is one event's line", errBadRequest)
		}
		e, err := store.ParseLine(body)
		if err != nil {
			return fmt.Errorf("%w: %v", errBadRequest, err)
		}
		c.event = e
	case pathRead:
		if c.from, err = parseInt(q.Get("from"), 0, 1<<62); err != nil {
			return fmt.Errorf("%w: from: %v", errBadRequest, err)
		}
	case pathLatest:
		n, err := parseInt(q.Get("n"), 0, maxLatest)
		if err != nil {
			return fmt.Errorf("%w: n: %v", errBadRequest, err)
		}
		c.n = int(n)
	case pathNarrow:
		if c.tools, err = decodeTools(body); err != nil {
			return fmt.Errorf("%w: %v", errBadRequest, err)
		}
	case pathLease, pathRelease:
		c.holder = q.Get("holder")
		if c.holder == "" || len(c.holder) > maxHolder || !utf8.ValidString(c.holder) {
			return fmt.Errorf("%w: a holder is 1 to %d bytes of UTF-8", errBadRequest, maxHolder)
		}
		if c.path == pathLease {
			ttl, err := parseInt(q.Get("ttl"), 1, int64(maxTTL))
			if err != nil {
				return fmt.Errorf("%w: ttl: %v", errBadRequest, err)
			}
			c.ttl = time.Duration(ttl)
		}
	}
	return nil
}

// parseInt reads a decimal integer from lo to hi, bounds included.
func parseInt(s string, lo, hi int64) (int64, error) {
	if !isDigits(s, 1, 19) {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q is not from %d to %d", s, lo, hi)
	}
	return n, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The codes of a driver's refusals, as they cross: each names a store
// sentinel, so errors.Is holds on the client's side.
const (
	codeSeqTaken   = "seq_taken"
	codeLeaseHeld  = "lease_held"
	codeCorrupt    = "corrupt"
	codeBadRequest = "bad_request"
	codeNoTools    = "tools_unsupported" // store.ErrToolsUnsupported
	codeNoForget   = "unsupported"
	codeError      = "error"
)

// codeNoToolsV1 is codeNoTools as the first wire spelled it. A client and
// a server of either wire understand each other: a client of wire 2
// says so on every call (headerWire) and reads either code; the server
// answers codeNoTools to a client that says it reads wire 2, and
// codeNoToolsV1 to one that says nothing, a first wire's client, which
// reads only that.
const codeNoToolsV1 = "tools_not_kept"

// headerWire is the header in which a client says the version of the
// wire it reads, wireVersion; a client of the first wire sends none.
const headerWire = "Link-Store-Wire"

// wireVersion is the wire this package speaks: the first, but a refusal
// of the tools calls is codeNoTools.
const wireVersion = "2"

// readsWire2 says whether the client that sent h reads wire 2 or later.
func readsWire2(h http.Header) bool {
	v, err := strconv.Atoi(h.Get(headerWire))
	return err == nil && v >= 2
}

// errorBody is the answer to a call that failed: its code and the
// driver's words.
type errorBody struct {
	Code  string `json:"code"`
	Error string `json:"error"`
}

// errorCode maps an error to its code and status.
func errorCode(err error) (code string, status int) {
	switch {
	case errors.Is(err, store.ErrSeqTaken):
		return codeSeqTaken, http.StatusConflict
	case errors.Is(err, store.ErrLeaseHeld):
		return codeLeaseHeld, http.StatusLocked
	case errors.Is(err, store.ErrCorrupt):
		return codeCorrupt, http.StatusInternalServerError
	case errors.Is(err, errBadRequest):
		return codeBadRequest, http.StatusBadRequest
	case errors.Is(err, store.ErrToolsUnsupported):
		return codeNoTools, http.StatusNotImplemented
	case errors.Is(err, errors.ErrUnsupported):
		return codeNoForget, http.StatusNotImplemented
	}
	return codeError, http.StatusInternalServerError
}

// remoteError is an error the server answered with. Its words are the
// driver's; Is matches the sentinel its code names.
type remoteError struct {
	code string
	msg  string
}

func (e *remoteError) Error() string { return "store bridge: " + e.msg }

func (e *remoteError) Is(target error) bool {
	switch e.code {
	case codeSeqTaken:
		return target == store.ErrSeqTaken
	case codeLeaseHeld:
		return target == store.ErrLeaseHeld
	case codeCorrupt:
		return target == store.ErrCorrupt
	case codeNoTools, codeNoToolsV1:
		return target == store.ErrToolsUnsupported
	case codeNoForget:
		return target == errors.ErrUnsupported
	}
	return false
}

// writeLines writes es as lines, as store.MarshalLine makes them.
func writeLines(w io.Writer, es []store.Event) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, e := range es {
		line, err := store.MarshalLine(e)
		if err != nil {
			return err
		}
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// readLines reads an answer of events' lines.
func readLines(r io.Reader) ([]store.Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 16<<10), store.MaxLine+1)
	var es []store.Event
	for sc.Scan() {
		e, err := store.ParseLine(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("answer's event %d: %w", len(es)+1, err)
		}
		es = append(es, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return es, nil
}
