package image

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Files lists every path in every layer of img, layer by layer, without a
// leading slash and with directories ending in "/", sorted and deduplicated.
// Tests compare it with the exact list of what the image should hold.
func Files(img v1.Image) ([]string, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	var files []string
	for i, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				_ = rc.Close()
				return nil, fmt.Errorf("layer %d: %w", i, err)
			}
			files = append(files, hdr.Name)
		}
		if err := rc.Close(); err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}
