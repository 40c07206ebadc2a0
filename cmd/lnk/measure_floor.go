package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/lnk-dev/link/cmd/internal/floor"
	"github.com/lnk-dev/link/contract"
)

func (m *Main) floorServerCmd() *cobra.Command {
	var keyFile string
	var port int
	c := &cobra.Command{
		Use:    "floor-server --key-file KEY",
		Short:  "the floor lnk measure sets its times beside: the contract's proof, upgrade and one message's frames over bare WebSockets (started by lnk measure)",
		Hidden: true,
		Args:   noWords,
		RunE: func(c *cobra.Command, _ []string) error {
			return status(runFloorServer(c.Context(), keyFile, port, m.Stdout, m.Stderr))
		},
	}
	c.Flags().StringVar(&keyFile, "key-file", "", "the endpoint key the proof is made with")
	c.Flags().IntVar(&port, "port", 0, "the loopback port; 0 picks a free one")
	return c
}

// runFloorServer serves the floor until ctx ends: on a free loopback port
// it prints as "floor <url>", the proof of the key in --key-file, the
// upgrade, and each message answered at once with the frames a harness
// sends (initialize's and session/resume's results, _link/taken, one
// agent_message_chunk, the prompt's result), by hand over coder/websocket:
// no endpoint, acp, store or model code, so what lnk measure times here
// is the least any harness could cost on this machine.
func runFloorServer(ctx context.Context, keyFile string, port int, stdout, stderr io.Writer) int {
	key, err := contract.ReadKeyFile(keyFile)
	if err != nil {
		fmt.Fprintf(stderr, "lnk measure floor-server: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		fmt.Fprintf(stderr, "lnk measure floor-server: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: floor.Handler(key), ReadHeaderTimeout: 10 * time.Second}
	context.AfterFunc(ctx, func() { srv.Close() })
	fmt.Fprintf(stdout, "floor %s\n", contract.EndpointURL(ln.Addr().(*net.TCPAddr).Port))
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintf(stderr, "lnk measure floor-server: %v\n", err)
		return 1
	}
	return 0
}
