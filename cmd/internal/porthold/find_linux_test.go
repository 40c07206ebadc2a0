package porthold

import (
	"slices"
	"strings"
	"testing"
)

const tcpTable = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:4970 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 123456 1 0000000000000000 100 0 0 10 0
   1: 0100007F:4970 0100007F:D2C4 01 00000000:00000000 00:00000000 00000000     0        0 654321 1 0000000000000000 20 4 30 10 -1
   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 100 0 0 10 0
`

// The table's listening sockets on a port are read by their inode; a
// connection on the port, another port, and lines not the table's are
// not.
func TestListening(t *testing.T) {
	if got := listening(strings.NewReader(tcpTable), 0x4970); !slices.Equal(got, []string{"123456"}) {
		t.Fatalf("port 18800: %q", got)
	}
	if got := listening(strings.NewReader(tcpTable), 22); !slices.Equal(got, []string{"777"}) {
		t.Fatalf("port 22: %q", got)
	}
	if got := listening(strings.NewReader("header\nnot a table\n0: x:y z 0A a b c d e\n"), 1); len(got) != 0 {
		t.Fatalf("junk: %q", got)
	}
}

// FuzzListening: any table is read without panic, and every inode
// returned is digits.
func FuzzListening(f *testing.F) {
	f.Add(tcpTable, 18800)
	f.Add("h\n0: 0100007F:FFFF 0:0 0A a b c d e 1\n", 65535)
	f.Fuzz(func(t *testing.T, table string, port int) {
		for _, ino := range listening(strings.NewReader(table), port) {
			if strings.Trim(ino, "0123456789") != "" || ino == "" {
				t.Fatalf("inode %q", ino)
			}
		}
	})
}
