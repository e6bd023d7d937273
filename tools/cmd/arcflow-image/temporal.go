package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/arcflow/arcflow/tools/image"
)

// runTemporal builds the bundled Temporal's image: the OCI layout and a
// docker-load tarball per platform, tagged with the CLI's version. The version
// flag is refused: the image's version is the CLI's.
func runTemporal(ctx context.Context, out, platformList, version, caBundle string) error {
	if version != "" && version != image.TemporalCLIVersion {
		return fmt.Errorf("-version %s: the Temporal image's version is the CLI's, %s (tools/image.TemporalCLIVersion)", version, image.TemporalCLIVersion)
	}
	meta, err := image.MetadataFromGit(ctx, ".")
	if err != nil {
		return err
	}
	meta = image.TemporalMetadata(meta)
	fmt.Printf("building %s (%s@%s, revision %s, created %s) for %s; a cold build of the CLI takes minutes per platform\n",
		image.TemporalTag(meta.Version), image.TemporalCLIPackage, meta.Version, meta.Revision, meta.Created.Format("2006-01-02T15:04:05Z"), platformList)
	res, err := image.BuildTemporal(ctx, image.Options{
		OutDir:    filepath.Join(out, "oci"),
		Platforms: parsePlatforms(platformList),
		Metadata:  &meta,
		CABundle:  caBundle,
	})
	if err != nil {
		return err
	}
	if err := writeImages(res, meta, out, "arcflow-temporal", image.TemporalTag(meta.Version), image.VerifyTemporal); err != nil {
		return err
	}
	fmt.Printf("verified    user %s, entrypoint %v, labels; files: /etc/passwd, /etc/group, %s, %s and their directories\n",
		image.User, image.TemporalEntrypoint, image.CABundlePath, image.TemporalBinaryPath)
	return nil
}
