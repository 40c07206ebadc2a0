package file

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
)

// confinedEnv makes the test binary a file server of the workspace it
// names, confined as lnk file serve confines itself: it prints the
// Landlock ABI, what its own read of a file outside the workspace met,
// and its URL.
const confinedEnv = "LNK_FILE_TEST_CONFINED"

func serveConfined(dir string) int {
	w, err := New(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	abi, err := Confine(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = os.ReadFile(filepath.Join(filepath.Dir(dir), "outside", "secret.txt"))
	_, cerr := net.Dial("tcp", ln.Addr().String())
	fmt.Printf("abi %d\noutside: %v\nconnect: %v\nhttp://%s\n", abi, err, cerr, ln.Addr())
	http.Serve(ln, Handler(w, Options{}))
	return 1
}
