// Package main is the lnk-gcs command, Google Cloud Storage's driver's plugin: it keeps an
// agent's conversations in a bucket, serving them behind the store bridge
// to the Link Harness or lnk that starts it (spec: "Off the machine,
// Google Cloud Storage's (lnk-gcs)"). Its bucket is --gcs-bucket or
// $LNK_GCS_BUCKET.
//
//	lnk-gcs serve --key-file FILE (--socket PATH | --listen 127.0.0.1:PORT) --gcs-bucket B [--gcs-endpoint URL] [--gcs-prefix P]
package main

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/lnk-dev/link/cmd/internal/drivers"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/gcs"
)

func main() { plugin.Main() }

var plugin = drivers.Plugin{Name: gcs.Name, Open: open}

// open opens the bucket its settings name, under the agent's prefix
// (agents/<agent>/chats unless told another). An endpoint other than
// Google's (a fake-gcs-server) is sent no credentials.
func open(ctx context.Context, p store.Paths, settings map[string]string) (store.Conversations, error) {
	bucket := settings[drivers.GCSBucket.Env]
	if bucket == "" {
		return nil, errors.New("the gcs driver needs a bucket: --gcs-bucket or $LNK_GCS_BUCKET")
	}
	var opts []option.ClientOption
	if ep := settings[drivers.GCSEndpoint.Env]; ep != "" {
		opts = append(opts, option.WithEndpoint(ep), option.WithoutAuthentication())
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("open cloud storage: %w", err)
	}
	prefix := settings[drivers.GCSPrefix.Env]
	if prefix == "" {
		prefix = "agents/" + p.Agent + "/chats"
	}
	return bucketDriver{gcs.Open(client, bucket, prefix), client}, nil
}

// bucketDriver is the driver with the client it uses, closed with it.
type bucketDriver struct {
	*gcs.Driver
	client *storage.Client
}

func (b bucketDriver) Close() error { return b.client.Close() }
