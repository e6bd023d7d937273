package image

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Platform is "os/arch", e.g. "linux/amd64".
type Platform string

// Platforms arcflow ships.
var Platforms = []Platform{"linux/amd64", "linux/arm64"}

// Split returns the OS and the architecture.
func (p Platform) Split() (goos, goarch string, err error) {
	goos, goarch, ok := strings.Cut(string(p), "/")
	if !ok || goos == "" || goarch == "" || strings.Contains(goarch, "/") {
		return "", "", fmt.Errorf("platform %q: want os/arch, e.g. linux/amd64", p)
	}
	return goos, goarch, nil
}

// Binaries are one platform's built programs: arcflow, and the webhook server
// alone (see WebhookBinaryPath).
type Binaries struct {
	Arcflow, Webhook []byte
}

// Assemble makes the OCI index of one image per platform from already built
// binaries and the CA bundle. The layer with users, groups and CA bundle is the
// same blob on every platform; the binaries are a layer of their own.
func Assemble(meta Metadata, caBundle []byte, binaries map[Platform]Binaries) (v1.ImageIndex, error) {
	layers := map[Platform][]file{}
	for p, b := range binaries {
		layers[p] = binaryFiles(b)
	}
	return assemble(meta, caBundle, imageSpec{
		labels:     meta.Labels(),
		entrypoint: Entrypoint,
		binaries:   layers,
		createdBy:  BinaryPath + ", " + WebhookBinaryPath + " " + meta.Version + " (CGO_ENABLED=0, -trimpath, -s -w)",
	})
}

// imageSpec is what one of the project's images holds beside the shared base
// layer: its labels, entrypoint and each platform's binaries.
type imageSpec struct {
	labels     map[string]string
	entrypoint []string
	binaries   map[Platform][]file
	// createdBy describes the binaries' layer in the image's history.
	createdBy string
}

func assemble(meta Metadata, caBundle []byte, spec imageSpec) (v1.ImageIndex, error) {
	base, err := baseFiles(caBundle)
	if err != nil {
		return nil, err
	}
	baseLayer, err := layer(base, meta.Created)
	if err != nil {
		return nil, fmt.Errorf("base layer: %w", err)
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range slices.Sorted(maps.Keys(spec.binaries)) {
		img, err := platformImage(p, meta, spec, baseLayer)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		goos, goarch, _ := p.Split()
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: goos, Architecture: goarch}},
		})
	}
	annotated, ok := mutate.Annotations(idx, spec.labels).(v1.ImageIndex)
	if !ok {
		return nil, fmt.Errorf("annotate index: unexpected type %T", idx)
	}
	return annotated, nil
}

func platformImage(p Platform, meta Metadata, spec imageSpec, baseLayer v1.Layer) (v1.Image, error) {
	goos, goarch, err := p.Split()
	if err != nil {
		return nil, err
	}
	binLayer, err := layer(spec.binaries[p], meta.Created)
	if err != nil {
		return nil, fmt.Errorf("binary layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		OS:           goos,
		Architecture: goarch,
		Created:      v1.Time{Time: meta.Created},
		RootFS:       v1.RootFS{Type: "layers"}, // the spec's only type; Append fills in the diff IDs
		Config: v1.Config{
			User:       User,
			Entrypoint: spec.entrypoint,
			Env:        []string{PathEnv},
			WorkingDir: "/",
			Labels:     spec.labels,
		},
	})
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: baseLayer, MediaType: types.OCILayer, History: v1.History{
			Created: v1.Time{Time: meta.Created}, CreatedBy: "arcflow-image: /etc/passwd, /etc/group (nonroot 65532), " + meta.CACertificates,
		}},
		mutate.Addendum{Layer: binLayer, MediaType: types.OCILayer, History: v1.History{
			Created: v1.Time{Time: meta.Created}, CreatedBy: "arcflow-image: " + spec.createdBy,
		}},
	)
	if err != nil {
		return nil, err
	}
	annotated, ok := mutate.Annotations(img, spec.labels).(v1.Image)
	if !ok {
		return nil, fmt.Errorf("annotate image: unexpected type %T", img)
	}
	return annotated, nil
}
