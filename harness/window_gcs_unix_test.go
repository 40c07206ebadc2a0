//go:build unix

package harness_test

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/store"
)

// fill adds events to thread in agent's bucket as the fake's own files,
// each object's content and its attributes (the fake's user.metadata
// extended attribute, its first event's made over by the driver taken
// as the model: the name, size and hashes changed), since the fake makes
// one in about 1.6 ms, which 100,000 would take minutes to.
func (g gcsBench) fill(b *testing.B, agent, thread string, events []store.Event) {
	bucket := filepath.Join(g.root, url.PathEscape(agent))
	const attr = "user.metadata"
	first := filepath.Join(bucket, gcsObject(b, thread, events[0].Seq-1))
	buf := make([]byte, 64<<10)
	n, err := unix.Getxattr(first, attr, buf)
	if err != nil {
		b.Fatalf("the fake's attributes of %s: %v", first, err)
	}
	var model map[string]any
	if err := json.Unmarshal(buf[:n], &model); err != nil {
		b.Fatal(err)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for _, e := range events {
		line, err := store.MarshalLine(e)
		if err != nil {
			b.Fatal(err)
		}
		name := gcsObject(b, thread, e.Seq)
		sum := md5.Sum(line)
		crc := binary.BigEndian.AppendUint32(nil, crc32.Checksum(line, castagnoli))
		model["Name"], model["Size"] = name, len(line)
		model["Md5Hash"] = base64.StdEncoding.EncodeToString(sum[:])
		model["Etag"] = model["Md5Hash"]
		model["Crc32c"] = base64.StdEncoding.EncodeToString(crc)
		attrs, err := json.Marshal(model)
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(bucket, name)
		if err := os.WriteFile(path, line, 0o600); err != nil {
			b.Fatal(err)
		}
		if err := unix.Setxattr(path, attr, attrs, 0); err != nil {
			b.Fatal(err)
		}
	}
}
