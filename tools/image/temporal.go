package image

import (
	"maps"
	"path"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The bundled Temporal's image: the Temporal CLI, whose `temporal server
// start-dev` the Helm chart runs when temporal.address is empty. A second image
// rather than a second program in arcflow's: the CLI is a large binary (it embeds
// the server and the Web UI) that the worker and webhook pods would pull for
// nothing, its version follows the CLI's pin rather than arcflow's releases, and
// arcflow's image stays exactly what it was.
const (
	// TemporalRepository is where the release pushes the Temporal image; the
	// chart's temporal.bundled.image.repository.
	TemporalRepository = "ghcr.io/arcflow/arcflow-temporal"
	// TemporalCLIModule is the Go module the binary is built from.
	TemporalCLIModule = "github.com/temporalio/cli"
	// TemporalCLIPackage is its main package.
	TemporalCLIPackage = TemporalCLIModule + "/cmd/temporal"
	// TemporalCLIVersion is the CLI the image holds: scripts/tools.sh's
	// TEMPORAL_CLI_VERSION, and the image's tag (temporal_test.go keeps the
	// three equal).
	TemporalCLIVersion = "v1.5.1"
	// TemporalBinaryPath is where the temporal binary lives.
	TemporalBinaryPath = "/usr/local/bin/temporal"
	// LabelTemporalCLI names the module and version the binary is built from.
	LabelTemporalCLI = "dev.arcflow.temporal-cli"
)

// TemporalEntrypoint is the Temporal image's entrypoint; the chart gives it
// `server start-dev ...`.
var TemporalEntrypoint = []string{"temporal"}

// TemporalExpectedFiles is everything the Temporal image holds, as Files lists
// it: the base layer of arcflow's image and the temporal binary.
var TemporalExpectedFiles = []string{
	"etc/", "etc/group", "etc/passwd", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt",
	"home/", "home/nonroot/",
	"usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/temporal",
}

// TemporalMetadata is meta (arcflow's commit and time) for the Temporal image:
// its version is the CLI's.
func TemporalMetadata(meta Metadata) Metadata {
	meta.Version = TemporalCLIVersion
	return meta
}

// TemporalLabels are the Temporal image's labels: arcflow's source and commit,
// the CLI's version and module.
func TemporalLabels(meta Metadata) map[string]string {
	labels := maps.Clone(meta.Labels())
	labels[LabelTitle] = "arcflow-temporal"
	labels[LabelDescription] = "The Temporal CLI's development server (temporal server start-dev with SQLite and the Web UI), arcflow's bundled Temporal"
	labels[LabelTemporalCLI] = TemporalCLIModule + "@" + meta.Version
	return labels
}

// AssembleTemporal makes the Temporal image's OCI index from each platform's
// temporal binary; meta is TemporalMetadata's. Its base layer is the same blob
// as arcflow's image's.
func AssembleTemporal(meta Metadata, caBundle []byte, binaries map[Platform][]byte) (v1.ImageIndex, error) {
	layers := map[Platform][]file{}
	for p, b := range binaries {
		layers[p] = programFiles(TemporalBinaryPath, b)
	}
	return assemble(meta, caBundle, imageSpec{
		labels:     TemporalLabels(meta),
		entrypoint: TemporalEntrypoint,
		binaries:   layers,
		createdBy:  TemporalBinaryPath + " " + TemporalCLIPackage + "@" + meta.Version + " (CGO_ENABLED=0, -trimpath, -s -w)",
	})
}

// VerifyTemporal checks that img is the Temporal image for platform p: nonroot,
// entrypoint temporal, its labels, and exactly TemporalExpectedFiles.
func VerifyTemporal(img v1.Image, p Platform, meta Metadata) error {
	return verify(img, p, meta, TemporalLabels(meta), TemporalEntrypoint, TemporalExpectedFiles)
}

// TemporalTag is the Temporal image's reference for a version.
func TemporalTag(version string) string {
	return TemporalRepository + ":" + dockerTag(version)
}

// programFiles is one program and its parent directories.
func programFiles(programPath string, data []byte) []file {
	files := []file{}
	for dir := path.Dir(programPath); dir != "/"; dir = path.Dir(dir) {
		files = append([]file{{name: dir, dir: true, mode: 0o755}}, files...)
	}
	return append(files, file{name: programPath, mode: 0o755, data: data})
}
