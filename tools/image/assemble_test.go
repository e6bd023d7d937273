package image

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/require"
)

var testMeta = Metadata{
	Version:        "v1.2.3-4-gabcdef0",
	Revision:       "abcdef0123456789abcdef0123456789abcdef01",
	Created:        time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC),
	CACertificates: "debian ca-certificates test",
}

const testBundle = "-----BEGIN CERTIFICATE-----\nnot a real certificate\n-----END CERTIFICATE-----\n"

func stubBinaries() map[Platform]Binaries {
	return map[Platform]Binaries{
		"linux/amd64": {Arcflow: []byte("amd64 arcflow"), Webhook: []byte("amd64 arcflow-webhook")},
		"linux/arm64": {Arcflow: []byte("arm64 arcflow"), Webhook: []byte("arm64 arcflow-webhook")},
	}
}

// writeStubLayout assembles the image from stand-in binaries, as make image does
// from real ones, and writes it as an OCI layout.
func writeStubLayout(t *testing.T) string {
	t.Helper()
	idx, err := Assemble(testMeta, []byte(testBundle), stubBinaries())
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "oci")
	require.NoError(t, WriteLayout(dir, idx, testMeta.Version))
	return dir
}

func TestLayoutHoldsOneIndexWithBothPlatforms(t *testing.T) {
	dir := writeStubLayout(t)
	top, err := layout.ImageIndexFromPath(dir)
	require.NoError(t, err)
	topManifest, err := top.IndexManifest()
	require.NoError(t, err)
	require.Len(t, topManifest.Manifests, 1, "index.json points at one image index")
	require.True(t, topManifest.Manifests[0].MediaType.IsIndex())
	require.Equal(t, testMeta.Version, topManifest.Manifests[0].Annotations["org.opencontainers.image.ref.name"])

	idx, err := top.ImageIndex(topManifest.Manifests[0].Digest)
	require.NoError(t, err)
	manifest, err := idx.IndexManifest()
	require.NoError(t, err)
	var platforms []string
	for _, d := range manifest.Manifests {
		platforms = append(platforms, d.Platform.OS+"/"+d.Platform.Architecture)
	}
	require.Equal(t, []string{"linux/amd64", "linux/arm64"}, platforms)
	require.Equal(t, testMeta.Revision, manifest.Annotations[LabelRevision])
}

func TestEveryPlatformRunsArcflowAsNonrootWithLabelsAndNothingElse(t *testing.T) {
	dir := writeStubLayout(t)
	for _, p := range Platforms {
		img, err := PlatformImageFromLayout(dir, p)
		require.NoError(t, err, p)
		require.NoError(t, Verify(img, p, testMeta))
		// What Verify compares with, spelled out: the Deployments run as 65532.
		cfg, err := img.ConfigFile()
		require.NoError(t, err)
		require.Equal(t, "65532:65532", cfg.Config.User)
		require.Equal(t, []string{"arcflow"}, cfg.Config.Entrypoint)
		require.Equal(t, "https://github.com/arcflow/arcflow", cfg.Config.Labels["org.opencontainers.image.source"])
		require.Equal(t, testMeta.Revision, cfg.Config.Labels["org.opencontainers.image.revision"])
		mf, err := img.Manifest()
		require.NoError(t, err)
		require.Equal(t, testMeta.Version, mf.Annotations[LabelVersion])
	}
}

func TestVerifyFindsAWrongUserAndAnExtraFile(t *testing.T) {
	img, err := PlatformImageFromLayout(writeStubLayout(t), "linux/amd64")
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	cfg.Config.User = "0:0"
	rootImg, err := mutate.ConfigFile(img, cfg)
	require.NoError(t, err)
	require.ErrorContains(t, Verify(rootImg, "linux/amd64", testMeta), "user is 0:0, want 65532:65532")

	shell, err := layer([]file{{name: "/bin", dir: true, mode: 0o755}, {name: "/bin/sh", mode: 0o755, data: []byte("sh")}}, testMeta.Created)
	require.NoError(t, err)
	withShell, err := mutate.AppendLayers(img, shell)
	require.NoError(t, err)
	require.ErrorContains(t, Verify(withShell, "linux/amd64", testMeta), "bin/sh")
	require.ErrorContains(t, Verify(img, "linux/arm64", testMeta), "platform is linux/amd64, want linux/arm64")
}

func TestSameInputsGiveSameDigestsAndTheTimestampIsInThem(t *testing.T) {
	first, err := Assemble(testMeta, []byte(testBundle), stubBinaries())
	require.NoError(t, err)
	second, err := Assemble(testMeta, []byte(testBundle), stubBinaries())
	require.NoError(t, err)
	later := testMeta
	later.Created = testMeta.Created.Add(time.Second)
	third, err := Assemble(later, []byte(testBundle), stubBinaries())
	require.NoError(t, err)

	d1, err := first.Digest()
	require.NoError(t, err)
	d2, err := second.Digest()
	require.NoError(t, err)
	d3, err := third.Digest()
	require.NoError(t, err)
	require.Equal(t, d1, d2)
	require.NotEqual(t, d1, d3)
}

func TestPlatformsShareTheBaseLayer(t *testing.T) {
	dir := writeStubLayout(t)
	var bases []v1.Hash
	for _, p := range Platforms {
		img, err := PlatformImageFromLayout(dir, p)
		require.NoError(t, err)
		mf, err := img.Manifest()
		require.NoError(t, err)
		require.Len(t, mf.Layers, 2)
		bases = append(bases, mf.Layers[0].Digest)
		require.NotEqual(t, mf.Layers[0].Digest, mf.Layers[1].Digest)
	}
	require.Equal(t, bases[0], bases[1])
}

func TestUnpackLaysOutThePlatformsFilesystem(t *testing.T) {
	dir := writeStubLayout(t)
	root := t.TempDir()
	require.NoError(t, Unpack(dir, "linux/arm64", root))

	binary, err := os.ReadFile(filepath.Join(root, BinaryPath))
	require.NoError(t, err)
	require.Equal(t, "arm64 arcflow", string(binary))
	webhook, err := os.ReadFile(filepath.Join(root, WebhookBinaryPath))
	require.NoError(t, err)
	require.Equal(t, "arm64 arcflow-webhook", string(webhook))
	for _, program := range []string{BinaryPath, WebhookBinaryPath} {
		st, err := os.Stat(filepath.Join(root, program))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o755), st.Mode().Perm())
	}
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	require.NoError(t, err)
	require.Contains(t, string(passwd), "nonroot:x:65532:65532:")
	bundle, err := os.ReadFile(filepath.Join(root, CABundlePath))
	require.NoError(t, err)
	require.Equal(t, testBundle, string(bundle))
}

func TestUnpackNamesAMissingPlatform(t *testing.T) {
	err := Unpack(writeStubLayout(t), "linux/s390x", t.TempDir())
	require.ErrorContains(t, err, "no image for linux/s390x")
}

func TestTagIsAValidDockerTag(t *testing.T) {
	require.Equal(t, "ghcr.io/arcflow/arcflow:v1.0.0-3-gabc-dirty", Tag("v1.0.0-3-gabc-dirty"))
	require.Equal(t, "ghcr.io/arcflow/arcflow:v1.0.0-rc.1-build.5", Tag("v1.0.0-rc.1+build.5"))
}
