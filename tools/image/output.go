package image

import (
	"fmt"
	"regexp"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// notInTag is what a Docker tag may not contain.
var notInTag = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// Tag is the image reference for a version: Repository:<version as a Docker tag>.
func Tag(version string) string {
	return Repository + ":" + dockerTag(version)
}

// dockerTag is version as a valid Docker tag.
func dockerTag(version string) string {
	tag := notInTag.ReplaceAllString(version, "-")
	if len(tag) > 128 {
		tag = tag[:128]
	}
	return tag
}

// WriteDockerTarball writes img as a `docker load` archive tagged Tag(version).
func WriteDockerTarball(path string, img v1.Image, version string) error {
	return WriteDockerTarballAs(path, img, Tag(version))
}

// WriteDockerTarballAs writes img as a `docker load` archive tagged tag.
func WriteDockerTarballAs(path string, img v1.Image, tag string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	if err := tarball.WriteToFile(path, ref, img); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
