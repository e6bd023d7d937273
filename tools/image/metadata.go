package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// What every arcflow image is; the Dockerfile must say the same (dockerfile_test.go).
const (
	// Repository is where the release workflow pushes the image; the Helm chart
	// and the kustomize base reference it.
	Repository = "ghcr.io/arcflow/arcflow"
	// Source is the org.opencontainers.image.source label.
	Source = "https://github.com/arcflow/arcflow"
	// Licenses is the org.opencontainers.image.licenses label. The repository has
	// no LICENSE file yet, so the image asserts none.
	Licenses = "NOASSERTION"
	// User is the image's user: nonroot, 65532, from rootfs/etc/passwd.
	User = "65532:65532"
	// BinaryPath is where the arcflow binary lives; Entrypoint finds it through PATH.
	BinaryPath = "/usr/local/bin/arcflow"
	// WebhookBinaryPath is the webhook server alone (a -tags webhookonly build of
	// cmd/arcflow), which the chart's and the kustomize base's webhook run: it
	// links no workflow code and no typed Kubernetes client, and so stays about
	// 19 MiB smaller in memory than arcflow running `webhook`.
	WebhookBinaryPath = "/usr/local/bin/arcflow-webhook"
	// CABundlePath is both where the host's Debian CA bundle is read and where the
	// image carries it (Go's crypto/x509 looks there first on Linux).
	CABundlePath = "/etc/ssl/certs/ca-certificates.crt"
	// PathEnv is the image's PATH.
	PathEnv = "PATH=/usr/local/bin"
)

// Entrypoint is the image's entrypoint.
var Entrypoint = []string{"arcflow"}

// Label keys.
const (
	LabelSource      = "org.opencontainers.image.source"
	LabelVersion     = "org.opencontainers.image.version"
	LabelRevision    = "org.opencontainers.image.revision"
	LabelLicenses    = "org.opencontainers.image.licenses"
	LabelCreated     = "org.opencontainers.image.created"
	LabelTitle       = "org.opencontainers.image.title"
	LabelDescription = "org.opencontainers.image.description"
	// LabelCACertificates names where the CA bundle comes from and its version.
	LabelCACertificates = "dev.arcflow.ca-certificates"
)

// Metadata describes one build; it becomes labels, annotations and timestamps.
type Metadata struct {
	// Version is stamped into the binary (`arcflow version`) and the labels.
	Version string
	// Revision is the git commit.
	Revision string
	// Created is every timestamp in the image: config, history and file times,
	// so one commit always gives the same digests.
	Created time.Time
	// CACertificates is "debian ca-certificates <package version>".
	CACertificates string
}

// Labels are the image's config labels, also used as manifest and index annotations.
func (m Metadata) Labels() map[string]string {
	return map[string]string{
		LabelSource:         Source,
		LabelVersion:        m.Version,
		LabelRevision:       m.Revision,
		LabelLicenses:       Licenses,
		LabelCreated:        m.Created.UTC().Format(time.RFC3339),
		LabelTitle:          "arcflow",
		LabelDescription:    "GitHub Actions runner autoscaling on Kubernetes (ARC legacy mode) driven by Temporal workflows",
		LabelCACertificates: m.CACertificates,
	}
}

// MetadataFromGit reads a build's metadata from the git checkout in dir: the
// version from `git describe --tags --always --dirty` ("dev" outside git), the
// commit, and the time from SOURCE_DATE_EPOCH or else the commit's time.
func MetadataFromGit(ctx context.Context, dir string) (Metadata, error) {
	m := Metadata{Version: "dev", Revision: "unknown", Created: time.Unix(0, 0).UTC()}
	if v, err := git(ctx, dir, "describe", "--tags", "--always", "--dirty"); err == nil {
		m.Version = v
	}
	if rev, err := git(ctx, dir, "rev-parse", "HEAD"); err == nil {
		m.Revision = rev
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		epoch, _ = git(ctx, dir, "log", "-1", "--format=%ct")
	}
	if epoch != "" {
		secs, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return m, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", epoch, err)
		}
		m.Created = time.Unix(secs, 0).UTC()
	}
	m.CACertificates = caCertificatesVersion(ctx)
	return m, nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// caCertificatesVersion names the Debian package the CA bundle comes from.
func caCertificatesVersion(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", "ca-certificates").Output()
	if err != nil || len(out) == 0 {
		return "debian ca-certificates (version unknown)"
	}
	return "debian ca-certificates " + strings.TrimSpace(string(out))
}
