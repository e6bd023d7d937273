package image

import (
	"archive/tar"
	"bytes"
	"embed"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

//go:embed rootfs/etc/passwd rootfs/etc/group
var rootfs embed.FS

// file is one entry of a layer: a directory when data is nil and dir is set.
type file struct {
	name     string // absolute path in the image
	mode     int64
	uid, gid int
	dir      bool
	data     []byte
}

// baseFiles are the files every platform shares: users, groups and CA bundle.
func baseFiles(caBundle []byte) ([]file, error) {
	passwd, err := rootfs.ReadFile("rootfs/etc/passwd")
	if err != nil {
		return nil, err
	}
	group, err := rootfs.ReadFile("rootfs/etc/group")
	if err != nil {
		return nil, err
	}
	return []file{
		{name: "/etc", dir: true, mode: 0o755},
		{name: "/etc/passwd", mode: 0o644, data: passwd},
		{name: "/etc/group", mode: 0o644, data: group},
		{name: "/etc/ssl", dir: true, mode: 0o755},
		{name: "/etc/ssl/certs", dir: true, mode: 0o755},
		{name: CABundlePath, mode: 0o644, data: caBundle},
		{name: "/home", dir: true, mode: 0o755},
		{name: "/home/nonroot", dir: true, mode: 0o700, uid: 65532, gid: 65532},
	}, nil
}

// binaryFiles is the arcflow binary and its parent directories.
func binaryFiles(b Binaries) []file {
	files := []file{}
	for dir := path.Dir(BinaryPath); dir != "/"; dir = path.Dir(dir) {
		files = append([]file{{name: dir, dir: true, mode: 0o755}}, files...)
	}
	return append(files, file{name: BinaryPath, mode: 0o755, data: b.Arcflow}, file{name: WebhookBinaryPath, mode: 0o755, data: b.Webhook})
}

// tarLayer writes files into a tar with every time set to created and no user
// or group names, so the same inputs give the same bytes.
func tarLayer(files []file, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{
			Name:    strings.TrimPrefix(f.name, "/"),
			Mode:    f.mode,
			Uid:     f.uid,
			Gid:     f.gid,
			ModTime: created,
			Format:  tar.FormatUSTAR,
		}
		if f.dir {
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("tar %s: %w", f.name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, fmt.Errorf("tar %s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// layer makes an OCI gzip layer of files, compressed once and cached.
func layer(files []file, created time.Time) (v1.Layer, error) {
	data, err := tarLayer(files, created)
	if err != nil {
		return nil, err
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}

// readCABundle reads the host's Debian CA bundle and checks it holds certificates.
func readCABundle(p string) ([]byte, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("CA bundle (Debian's ca-certificates package; `apt-get install ca-certificates`): %w", err)
	}
	if !bytes.Contains(data, []byte("-----BEGIN CERTIFICATE-----")) {
		return nil, fmt.Errorf("CA bundle %s holds no PEM certificate", p)
	}
	return data, nil
}
