package main

import (
	"testing"

	"github.com/lnk-dev/link/cmd/internal/drivers/driverstest"
)

// lnk links neither the SQLite driver nor Cloud Storage: it runs them in
// their plugins, lnk-sqlite and lnk-gcs, behind the store bridge, so a
// fresh machine's go build ./cmd/lnk downloads and builds none of Cloud
// Storage's SDK, gRPC and auth. (SQLite itself it links for Link Memory's
// index, memory/fts.)
func TestLinksNoPlugin(t *testing.T) {
	driverstest.LinksNoPlugin(t, driverstest.Module+"/cmd/lnk")
}
