package mcpserve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// unread fails a test that reads it.
type unread struct{ t *testing.T }

func (u unread) Read([]byte) (int, error) {
	u.t.Error("the body of a refused request was read")
	return 0, nil
}

// guard refuses a request at another path before anything of it is read,
// and hands the one at its path on whole.
func TestGuardReadsNothingRefused(t *testing.T) {
	served := 0
	h := guard("/mcp/s3cret", testTool.refused(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }))
	for _, path := range []string{"/mcp/s3cre", "/mcp/s3cretx", "/mcp/S3CRET", "/mcp/%73%33cret", "/"} {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1"+path, unread{t})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "$LNK_TEST") {
			t.Errorf("%s: %d %q", path, w.Code, w.Body)
		}
	}
	if served != 0 {
		t.Fatalf("%d refused requests reached the server", served)
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp/s3cret", strings.NewReader("{}")))
	if served != 1 {
		t.Fatal("the request at its path wasn't served")
	}
}
