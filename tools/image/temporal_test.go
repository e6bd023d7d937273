package image

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

func stubTemporalBinaries() map[Platform][]byte {
	return map[Platform][]byte{"linux/amd64": []byte("amd64 temporal"), "linux/arm64": []byte("arm64 temporal")}
}

// writeStubTemporalLayout assembles the Temporal image from stand-in binaries,
// as make image-temporal does from the built CLI.
func writeStubTemporalLayout(t *testing.T) string {
	t.Helper()
	idx, err := AssembleTemporal(TemporalMetadata(testMeta), []byte(testBundle), stubTemporalBinaries())
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "oci")
	require.NoError(t, WriteLayout(dir, idx, TemporalCLIVersion))
	return dir
}

func TestTemporalImageRunsTheCLIAsNonrootWithItsLabels(t *testing.T) {
	dir := writeStubTemporalLayout(t)
	meta := TemporalMetadata(testMeta)
	for _, p := range Platforms {
		img, err := PlatformImageFromLayout(dir, p)
		require.NoError(t, err, p)
		require.NoError(t, VerifyTemporal(img, p, meta))
		cfg, err := img.ConfigFile()
		require.NoError(t, err)
		require.Equal(t, "65532:65532", cfg.Config.User, "the chart's runAsUser")
		require.Equal(t, []string{"temporal"}, cfg.Config.Entrypoint)
		require.Equal(t, "github.com/temporalio/cli@v1.5.1", cfg.Config.Labels[LabelTemporalCLI])
		require.Equal(t, TemporalCLIVersion, cfg.Config.Labels[LabelVersion], "the image's version is the CLI's")
		require.Equal(t, testMeta.Revision, cfg.Config.Labels[LabelRevision], "built from this commit")
		require.Equal(t, "arcflow-temporal", cfg.Config.Labels[LabelTitle])
		// It is not arcflow's image, and arcflow's check says so.
		require.ErrorContains(t, Verify(img, p, meta), "usr/local/bin/temporal")
	}
}

func TestTemporalImageSharesArcflowsBaseLayer(t *testing.T) {
	arcflow, err := PlatformImageFromLayout(writeStubLayout(t), "linux/amd64")
	require.NoError(t, err)
	temporal, err := PlatformImageFromLayout(writeStubTemporalLayout(t), "linux/amd64")
	require.NoError(t, err)
	a, err := arcflow.Manifest()
	require.NoError(t, err)
	b, err := temporal.Manifest()
	require.NoError(t, err)
	require.Len(t, b.Layers, 2)
	require.Equal(t, a.Layers[0].Digest, b.Layers[0].Digest, "a node that has arcflow's image pulls only the CLI's layer")
	require.NotEqual(t, a.Layers[1].Digest, b.Layers[1].Digest)
}

func TestUnpackLaysOutTheTemporalImage(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, Unpack(writeStubTemporalLayout(t), "linux/arm64", root))
	binary, err := os.ReadFile(filepath.Join(root, TemporalBinaryPath))
	require.NoError(t, err)
	require.Equal(t, "arm64 temporal", string(binary))
	st, err := os.Stat(filepath.Join(root, TemporalBinaryPath))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), st.Mode().Perm())
	_, err = os.Stat(filepath.Join(root, BinaryPath))
	require.ErrorIs(t, err, os.ErrNotExist, "no arcflow in the Temporal image")
}

func TestTemporalImageDigestsAreReproducible(t *testing.T) {
	meta := TemporalMetadata(testMeta)
	first, err := AssembleTemporal(meta, []byte(testBundle), stubTemporalBinaries())
	require.NoError(t, err)
	second, err := AssembleTemporal(meta, []byte(testBundle), stubTemporalBinaries())
	require.NoError(t, err)
	d1, err := first.Digest()
	require.NoError(t, err)
	d2, err := second.Digest()
	require.NoError(t, err)
	require.Equal(t, d1, d2)
}

// TestTemporalCLIIsPinnedOnce: the CLI the image holds is the one make tools
// builds for the local stack (scripts/tools.sh), and the chart deploys the
// image of that version from the repository the release pushes to.
func TestTemporalCLIIsPinnedOnce(t *testing.T) {
	tools, err := os.ReadFile("../../scripts/tools.sh")
	require.NoError(t, err)
	pin := regexp.MustCompile(`(?m)^TEMPORAL_CLI_VERSION=(\S+)$`).FindSubmatch(tools)
	require.NotNil(t, pin, "scripts/tools.sh pins TEMPORAL_CLI_VERSION")
	require.Equal(t, TemporalCLIVersion, string(pin[1]))

	var values struct {
		Temporal struct {
			Bundled struct {
				Image struct{ Repository, Tag string }
			}
		}
	}
	readYAML(t, "../../deploy/helm/arcflow/values.yaml", &values)
	require.Equal(t, TemporalRepository, values.Temporal.Bundled.Image.Repository)
	require.Equal(t, TemporalCLIVersion, values.Temporal.Bundled.Image.Tag)
	require.Equal(t, "ghcr.io/arcflow/arcflow-temporal:v1.5.1", TemporalTag(TemporalCLIVersion))
}
