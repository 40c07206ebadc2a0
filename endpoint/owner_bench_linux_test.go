package endpoint

import (
	"net"
	"testing"
)

// BenchmarkCheckOwner is the owner check of a dial to a loopback
// listener: by the socket diagnostics, and by the tables read whole.
func BenchmarkCheckOwner(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	at := ln.Addr().(*net.TCPAddr)
	b.Run("diag", func(b *testing.B) {
		for b.Loop() {
			if _, err := listenerUID(at); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tables", func(b *testing.B) {
		for b.Loop() {
			if err := checkOwnerTables(at); err != nil {
				b.Fatal(err)
			}
		}
	})
}
