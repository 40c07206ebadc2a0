package memory_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lnk-dev/link/memory"
)

// FuzzEmbedAnswer proves an answer of the local runtime's /api/embed,
// whatever its status and body, never panics the embedder, and that
// embeddings it takes are one for each text asked, as the answer held
// them.
func FuzzEmbedAnswer(f *testing.F) {
	for _, s := range []string{
		`{"embeddings":[[1,0],[0.7,0.7]]}`,
		`{"embeddings":[[1,0]]}`,
		`{"embeddings":[[1,0],[1,0],[1,0]]}`,
		`{"embeddings":[null,[]]}`,
		`{"embeddings":[[1e39,0],[0,1]]}`,
		`{"error":"model not found"}`,
		`[`, ``,
	} {
		f.Add(200, []byte(s))
	}
	f.Add(404, []byte(`{"error":"model \"x\" not found"}`))
	var body atomic.Pointer[[]byte]
	var status atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(int(status.Load()))
		w.Write(*body.Load())
	}))
	f.Cleanup(srv.Close)
	o, err := memory.NewOllama(strings.TrimPrefix(srv.URL, "http://"), "nomic-embed-text")
	if err != nil {
		f.Fatal(err)
	}
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, code int, b []byte) {
		if code < 200 || code > 599 {
			code = 200 + (code%400+400)%400
		}
		status.Store(int32(code))
		body.Store(&b)
		i := strconv.FormatInt(n.Add(1), 10)
		texts := []string{"a" + i, "b" + i} // new texts: none cached
		got, err := o.Embed(context.Background(), texts)
		if err != nil {
			return
		}
		if code != http.StatusOK {
			t.Fatalf("took an answer of status %d: %s", code, b)
		}
		var want struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		if json.Unmarshal(b, &want) != nil || len(got) != len(texts) || len(want.Embeddings) != len(got) {
			t.Fatalf("took %d embeddings for %d texts from %s", len(got), len(texts), b)
		}
		for j := range got {
			if len(got[j]) != len(want.Embeddings[j]) {
				t.Fatalf("embedding %d is %v, the answer held %v", j, got[j], want.Embeddings[j])
			}
		}
	})
}
