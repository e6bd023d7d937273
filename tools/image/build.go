package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/arcflow/arcflow/tools/buildtags"
)

// Options chooses what Build builds and where.
type Options struct {
	// OutDir receives the OCI image layout; whatever was there is replaced.
	OutDir string
	// ModuleDir is the arcflow module's root; empty means the module holding the
	// working directory.
	ModuleDir string
	// Platforms to build; empty means Platforms (linux/amd64 and linux/arm64).
	Platforms []Platform
	// Metadata; nil means MetadataFromGit(ModuleDir).
	Metadata *Metadata
	// CABundle is the host's Debian CA bundle; empty means CABundlePath.
	CABundle string
}

// Result is what Build wrote.
type Result struct {
	// Layout is the OCI image layout directory (Options.OutDir).
	Layout      string
	Metadata    Metadata
	Index       v1.ImageIndex
	IndexDigest v1.Hash
	Images      []PlatformImage
}

// PlatformImage is one platform's image in the index.
type PlatformImage struct {
	Platform Platform
	Image    v1.Image
	Digest   v1.Hash
	// CompressedSize is what a registry stores and a node pulls: manifest,
	// config and compressed layers.
	CompressedSize int64
}

// Build compiles a static arcflow binary for each platform (CGO_ENABLED=0,
// -trimpath, -s -w, main.version stamped), assembles the image index and writes
// it as an OCI image layout into opts.OutDir.
func Build(ctx context.Context, opts Options) (*Result, error) {
	if opts.OutDir == "" {
		return nil, fmt.Errorf("image build: no output directory")
	}
	if opts.ModuleDir == "" {
		dir, err := moduleDir(ctx)
		if err != nil {
			return nil, err
		}
		opts.ModuleDir = dir
	}
	if len(opts.Platforms) == 0 {
		opts.Platforms = Platforms
	}
	if opts.CABundle == "" {
		opts.CABundle = CABundlePath
	}
	if opts.Metadata == nil {
		meta, err := MetadataFromGit(ctx, opts.ModuleDir)
		if err != nil {
			return nil, err
		}
		opts.Metadata = &meta
	}
	caBundle, err := readCABundle(opts.CABundle)
	if err != nil {
		return nil, err
	}
	binDir, err := os.MkdirTemp("", "arcflow-image-bin-")
	if err != nil {
		return nil, fmt.Errorf("image build: %w", err)
	}
	defer func() { _ = os.RemoveAll(binDir) }()
	binaries := map[Platform]Binaries{}
	for _, p := range opts.Platforms {
		var b Binaries
		for _, program := range []struct {
			name, tags string
			into       *[]byte
		}{{"arcflow", buildtags.With(), &b.Arcflow}, {"arcflow-webhook", buildtags.With(buildtags.WebhookOnly), &b.Webhook}} {
			out := filepath.Join(binDir, strings.ReplaceAll(string(p), "/", "-"), program.name)
			if err := CompileArcflow(ctx, opts.ModuleDir, p, opts.Metadata.Version, program.tags, out); err != nil {
				return nil, err
			}
			if *program.into, err = os.ReadFile(out); err != nil {
				return nil, fmt.Errorf("image build: %w", err)
			}
		}
		binaries[p] = b
	}
	idx, err := Assemble(*opts.Metadata, caBundle, binaries)
	if err != nil {
		return nil, fmt.Errorf("image build: %w", err)
	}
	if err := WriteLayout(opts.OutDir, idx, opts.Metadata.Version); err != nil {
		return nil, err
	}
	return describe(opts.OutDir, *opts.Metadata, idx)
}

// CompileArcflow builds ./cmd/arcflow of the module in moduleDir for one platform,
// with the given build tags (buildtags.With), as the image
// ships it: static, reproducible, stripped, version stamped.
func CompileArcflow(ctx context.Context, moduleDir string, p Platform, version, tags, out string) error {
	goos, goarch, err := p.Split()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", tags,
		"-ldflags", "-s -w -X main.version="+version, "-o", out, "./cmd/arcflow")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build arcflow for %s: %w\n%s", p, err, output)
	}
	return nil
}

// WriteLayout replaces dir with an OCI image layout whose index.json points at
// idx, named by version.
func WriteLayout(dir string, idx v1.ImageIndex, version string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clear %s: %w", dir, err)
	}
	path, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	if err := path.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": version,
	})); err != nil {
		return fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	return nil
}

func describe(dir string, meta Metadata, idx v1.ImageIndex) (*Result, error) {
	r := &Result{Layout: dir, Metadata: meta, Index: idx}
	var err error
	if r.IndexDigest, err = idx.Digest(); err != nil {
		return nil, err
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, desc := range manifest.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return nil, err
		}
		size, err := CompressedSize(img)
		if err != nil {
			return nil, err
		}
		r.Images = append(r.Images, PlatformImage{
			Platform:       Platform(desc.Platform.OS + "/" + desc.Platform.Architecture),
			Image:          img,
			Digest:         desc.Digest,
			CompressedSize: size,
		})
	}
	return r, nil
}

// CompressedSize is the manifest, the config and the compressed layers of img.
func CompressedSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	size, err := img.Size()
	if err != nil {
		return 0, err
	}
	size += m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	return size, nil
}

// moduleDir is the root of the module holding the working directory.
func moduleDir(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module: set Options.ModuleDir")
	}
	return filepath.Dir(gomod), nil
}
