package endpoint

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// FuzzListenerOwner proves a /proc/net/tcp table, whatever its lines,
// never panics listenerOwner, and that a uid it finds is the uid field of
// one of the table's listening lines.
func FuzzListenerOwner(f *testing.F) {
	lo := "0100007F"
	if !isLittleEndian() {
		lo = "7F000001"
	}
	head := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	line := func(local, st, uid string) string {
		return "   0: " + local + " 00000000:0000 " + st + " 00000000:00000000 00:00000000 00000000  " + uid + "        0 4242 1 0 100 0 0 10 0\n"
	}
	f.Add(head+line(lo+":1F90", "0A", "1001"), 8080)
	f.Add(head+line("00000000:1F90", "0A", "1002")+line(lo+":1F90", "0A", "1003"), 8080)
	f.Add(head+line(strings.Repeat("0", 32)+":1F90", "0A", "7"), 8080)
	f.Add(head+line(lo+":1F90", "0A", "-1"), 8080)
	f.Add(head+line(lo+":XYZ", "0A", "1"), 8080)
	f.Add(head+line("7F:1F90", "0A", "1"), 8080)
	f.Add(head+"0: a b 0A\n", 0)
	f.Fuzz(func(t *testing.T, table string, port int) {
		at := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
		uid, found, err := listenerOwner(strings.NewReader(table), at)
		if err != nil || !found {
			return
		}
		for _, l := range strings.Split(table, "\n") {
			if fl := strings.Fields(l); len(fl) >= 8 && fl[3] == stateListen {
				if n, err := strconv.Atoi(fl[7]); err == nil && n == uid {
					return
				}
			}
		}
		t.Fatalf("found uid %d in a table with no such listening line:\n%s", uid, table)
	})
}
