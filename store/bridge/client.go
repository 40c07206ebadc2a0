package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// Config says where a store bridge is and how to prove calls to it.
type Config struct {
	// Network is "unix" (Address a socket's path) or "tcp" (Address a
	// loopback host:port).
	Network, Address string
	// Key is the agent's key.
	Key []byte
	// Timeout stops each call past it, on top of its context;
	// DefaultTimeout if zero.
	Timeout time.Duration
	// Now is the clock calls are timed by; time.Now if nil.
	Now func() time.Time
}

// Validate says what of the config is wrong.
func (c Config) Validate() error {
	switch c.Network {
	case "unix":
		if c.Address == "" {
			return errors.New("store bridge: no socket path")
		}
	case "tcp":
		if err := checkLoopback(c.Address); err != nil {
			return err
		}
	default:
		return fmt.Errorf("store bridge: no network %q (unix or tcp)", c.Network)
	}
	if _, err := contract.ParseKey(c.Key); err != nil {
		return fmt.Errorf("store bridge: %w", err)
	}
	if c.Timeout < 0 {
		return errors.New("store bridge: a negative timeout")
	}
	return nil
}

// Client is a store.Conversations whose calls a store bridge answers.
type Client struct {
	base    string
	hc      *http.Client
	key     []byte
	timeout time.Duration
	now     func() time.Time
}

var (
	_ store.Conversations = (*Client)(nil)
	_ store.LatestReader  = (*Client)(nil)
	_ store.Closer        = (*Client)(nil)
)

// Dial reaches the store bridge cfg names and proves a first call to it,
// so a bridge not there, or refusing the key, is said at once.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	var dialer net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, cfg.Network, cfg.Address)
		},
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	base := "http://store-bridge"
	if cfg.Network == "tcp" {
		base = "http://" + cfg.Address
	}
	c := &Client{
		base:    base,
		hc:      &http.Client{Transport: tr},
		key:     append([]byte(nil), cfg.Key...),
		timeout: cfg.Timeout,
		now:     cfg.Now,
	}
	if err := c.do(ctx, http.MethodGet, pathPing, nil, nil, nil); err != nil {
		c.Close()
		return nil, fmt.Errorf("dial store bridge %s %s: %w", cfg.Network, cfg.Address, err)
	}
	return c, nil
}

// Close lets the client's idle connections go.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// Append writes e as the thread's event e.Seq through the bridge. Sent
// again after its answer was lost, the same event succeeds.
func (c *Client) Append(ctx context.Context, thread string, e store.Event) error {
	if err := c.append(ctx, thread, e); err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	return nil
}

func (c *Client) append(ctx context.Context, thread string, e store.Event) error {
	if err := contract.CheckThread(thread); err != nil {
		return err
	}
	if e.Seq < 1 {
		return fmt.Errorf("%w: numbers start at 1", store.ErrSeqTaken)
	}
	if e.Kind == "" {
		return errors.New("an event has a kind")
	}
	line, err := store.MarshalLine(e)
	if err != nil {
		return err
	}
	if len(line) > maxBody {
		return fmt.Errorf("event of %d bytes is over %d", len(line), store.MaxLine)
	}
	return c.do(ctx, http.MethodPost, pathAppend, url.Values{"thread": {thread}}, line, nil)
}

// Read returns the thread's events numbered from and after.
func (c *Client) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	if err := contract.CheckThread(thread); err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	var es []store.Event
	q := url.Values{"thread": {thread}, "from": {strconv.FormatInt(max(from, 0), 10)}}
	if err := c.do(ctx, http.MethodGet, pathRead, q, nil, &es); err != nil {
		return nil, fmt.Errorf("read %s from %d: %w", thread, from, err)
	}
	return es, nil
}

// Latest returns the thread's last n events.
func (c *Client) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	if err := contract.CheckThread(thread); err != nil {
		return nil, fmt.Errorf("latest %s: %w", thread, err)
	}
	if n <= 0 {
		return nil, nil
	}
	var es []store.Event
	q := url.Values{"thread": {thread}, "n": {strconv.Itoa(min(n, maxLatest))}}
	if err := c.do(ctx, http.MethodGet, pathLatest, q, nil, &es); err != nil {
		return nil, fmt.Errorf("latest %d of %s: %w", n, thread, err)
	}
	return es, nil
}

// Lease takes or renews the thread's lease for holder until ttl from the
// bridge's clock.
func (c *Client) Lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	l, err := c.lease(ctx, thread, holder, ttl)
	if err != nil {
		return store.Lease{}, fmt.Errorf("lease %s for %s: %w", thread, holder, err)
	}
	return l, nil
}

func (c *Client) lease(ctx context.Context, thread, holder string, ttl time.Duration) (store.Lease, error) {
	if err := contract.CheckThread(thread); err != nil {
		return store.Lease{}, err
	}
	if holder == "" || len(holder) > maxHolder {
		return store.Lease{}, fmt.Errorf("a holder is 1 to %d bytes", maxHolder)
	}
	if ttl <= 0 || ttl > maxTTL {
		return store.Lease{}, fmt.Errorf("a lease lasts more than nothing and at most %v", maxTTL)
	}
	var l store.Lease
	q := url.Values{"thread": {thread}, "holder": {holder}, "ttl": {strconv.FormatInt(int64(ttl), 10)}}
	err := c.do(ctx, http.MethodPost, pathLease, q, nil, &l)
	return l, err
}

// Release lets holder's lease of the thread go.
func (c *Client) Release(ctx context.Context, thread, holder string) error {
	if err := contract.CheckThread(thread); err != nil {
		return fmt.Errorf("release %s for %s: %w", thread, holder, err)
	}
	if holder == "" || len(holder) > maxHolder {
		return fmt.Errorf("release %s for %s: a holder is 1 to %d bytes", thread, holder, maxHolder)
	}
	q := url.Values{"thread": {thread}, "holder": {holder}}
	if err := c.do(ctx, http.MethodPost, pathRelease, q, nil, nil); err != nil {
		return fmt.Errorf("release %s for %s: %w", thread, holder, err)
	}
	return nil
}

// do makes one proved call, stopped past the client's timeout, and reads
// its answer into out: *[]store.Event for lines, else JSON.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	sign(req, c.key, body, c.now())
	req.Header.Set(headerWire, wireVersion)
	resp, err := c.hc.Do(req)
	if err != nil {
		return unwrapURL(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return ErrRefused
	case resp.StatusCode >= 300:
		var eb errorBody
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &eb) != nil || eb.Code == "" {
			return fmt.Errorf("store bridge: %s", resp.Status)
		}
		return &remoteError{code: eb.Code, msg: eb.Error}
	case out == nil:
		return nil
	}
	if es, ok := out.(*[]store.Event); ok {
		*es, err = readLines(resp.Body)
	} else {
		err = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(out)
	}
	if err != nil {
		return fmt.Errorf("store bridge's answer: %w", err)
	}
	return nil
}

// unwrapURL drops the *url.Error around a transport's error, whose text
// repeats the bridge's made-up host.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("store bridge: %w", ue.Err)
	}
	return err
}
