package image

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Unpack writes the filesystem of the image for platform ("linux/amd64") in the
// OCI image layout at layoutDir into destDir, so its binary can run from there:
// destDir + BinaryPath. Layers are applied in order with their whiteouts; file
// owners are not kept (an unprivileged test cannot chown).
func Unpack(layoutDir string, platform Platform, destDir string) error {
	img, err := PlatformImageFromLayout(layoutDir, platform)
	if err != nil {
		return err
	}
	flat := mutate.Extract(img)
	defer func() { _ = flat.Close() }()
	if err := extractTar(flat, destDir); err != nil {
		return fmt.Errorf("unpack %s from %s: %w", platform, layoutDir, err)
	}
	return nil
}

// PlatformImageFromLayout finds the image for platform in an OCI image layout,
// looking through nested indexes.
func PlatformImageFromLayout(layoutDir string, platform Platform) (v1.Image, error) {
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		return nil, fmt.Errorf("read OCI layout %s: %w", layoutDir, err)
	}
	img, err := findPlatform(idx, platform)
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", layoutDir, err)
	}
	return img, nil
}

func findPlatform(idx v1.ImageIndex, platform Platform) (v1.Image, error) {
	goos, goarch, err := platform.Split()
	if err != nil {
		return nil, err
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, desc := range manifest.Manifests {
		switch {
		case desc.MediaType.IsIndex():
			child, err := idx.ImageIndex(desc.Digest)
			if err != nil {
				return nil, err
			}
			if img, err := findPlatform(child, platform); err == nil {
				return img, nil
			}
		case desc.MediaType.IsImage() && desc.Platform != nil &&
			desc.Platform.OS == goos && desc.Platform.Architecture == goarch:
			return idx.Image(desc.Digest)
		}
	}
	return nil, fmt.Errorf("no image for %s", platform)
}

// extractTar writes a flattened image filesystem into dest, refusing entries
// that would land outside it.
func extractTar(r io.Reader, dest string) error {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean("/" + hdr.Name)
		target := filepath.Join(dest, name)
		if name == "/" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(hdr.Mode).Perm()
		switch hdr.Typeflag {
		case tar.TypeDir:
			// Owner-writable, so later files can land in it even when the
			// image's mode (0700 of another user) would forbid it.
			if err := os.MkdirAll(target, mode|0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := writeFile(target, tr, mode); err != nil {
				return err
			}
		case tar.TypeSymlink:
			resolved, err := filepath.Rel(dest, filepath.Join(filepath.Dir(target), hdr.Linkname))
			if err != nil || filepath.IsAbs(hdr.Linkname) || resolved == ".." || strings.HasPrefix(resolved, "../") {
				return fmt.Errorf("%s: symlink to %s leaves the image", hdr.Name, hdr.Linkname)
			}
			if err := os.Symlink(hdr.Linkname, target); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: unsupported tar entry type %q", hdr.Name, hdr.Typeflag)
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
