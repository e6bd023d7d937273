// Command arcflow-image builds arcflow's container image without a Docker engine
// (`make image`): an OCI image layout with one index for linux/amd64 and
// linux/arm64, and a `docker load` tarball per platform. It prints the digests,
// the compressed size of each platform's image and where everything went.
//
// With -temporal it builds the bundled Temporal's image instead (`make
// image-temporal`): the pinned Temporal CLI from the Go module proxy.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/arcflow/arcflow/tools/image"
)

func main() {
	out := flag.String("out", "bin/image", "output directory: oci/ (the OCI image layout) and one docker-load tarball per platform")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms")
	version := flag.String("version", "", "version to stamp (default: git describe --tags --always --dirty, or dev)")
	caBundle := flag.String("ca-bundle", image.CABundlePath, "CA bundle of Debian's ca-certificates package")
	temporal := flag.Bool("temporal", false, "build the bundled Temporal's image ("+image.TemporalRepository+", the Temporal CLI "+image.TemporalCLIVersion+") instead of arcflow's")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	build := run
	if *temporal {
		build = runTemporal
	}
	if err := build(ctx, *out, *platforms, *version, *caBundle); err != nil {
		fmt.Fprintln(os.Stderr, "arcflow-image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out, platformList, version, caBundle string) error {
	meta, err := image.MetadataFromGit(ctx, ".")
	if err != nil {
		return err
	}
	if version != "" {
		meta.Version = version
	}
	platforms := parsePlatforms(platformList)
	fmt.Printf("building %s (%s, revision %s, created %s) for %s\n",
		image.Tag(meta.Version), meta.Version, meta.Revision, meta.Created.Format("2006-01-02T15:04:05Z"), platformList)
	res, err := image.Build(ctx, image.Options{
		OutDir:    filepath.Join(out, "oci"),
		Platforms: platforms,
		Metadata:  &meta,
		CABundle:  caBundle,
	})
	if err != nil {
		return err
	}
	if err := writeImages(res, meta, out, "arcflow", image.Tag(meta.Version), image.Verify); err != nil {
		return err
	}
	fmt.Printf("verified    user %s, entrypoint %v, labels; files: /etc/passwd, /etc/group, %s, %s, %s and their directories\n",
		image.User, image.Entrypoint, image.CABundlePath, image.BinaryPath, image.WebhookBinaryPath)
	fmt.Printf("CA bundle   %s (%s)\n", caBundle, meta.CACertificates)
	return nil
}

func parsePlatforms(list string) []image.Platform {
	var platforms []image.Platform
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p != "" {
			platforms = append(platforms, image.Platform(p))
		}
	}
	return platforms
}
