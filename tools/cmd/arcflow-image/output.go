package main

import (
	"fmt"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/arcflow/arcflow/tools/image"
)

// writeImages checks each platform's image with verify and writes it as a
// docker-load tarball, <name>-<os>-<arch>.tar in out, tagged tag.
func writeImages(res *image.Result, meta image.Metadata, out, name, tag string, verify func(v1.Image, image.Platform, image.Metadata) error) error {
	fmt.Printf("OCI layout  %s\nindex       %s\n", res.Layout, res.IndexDigest)
	for _, img := range res.Images {
		if err := verify(img.Image, img.Platform, meta); err != nil {
			return fmt.Errorf("the %s image %s is not what arcflow ships: %w", img.Platform, name, err)
		}
		tarPath := filepath.Join(out, name+"-"+strings.ReplaceAll(string(img.Platform), "/", "-")+".tar")
		if err := image.WriteDockerTarballAs(tarPath, img.Image, tag); err != nil {
			return err
		}
		fmt.Printf("%-11s %s  %.1f MB compressed  docker load -i %s\n",
			img.Platform, img.Digest, float64(img.CompressedSize)/1e6, tarPath)
	}
	return nil
}
