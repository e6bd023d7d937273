package image

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/tools/buildtags"
)

// instruction is one Dockerfile instruction with its continuation lines joined.
type instruction struct {
	op, args string
}

func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []instruction
	var current string
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if current == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			current += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		current += trimmed
		op, args, _ := strings.Cut(current, " ")
		out = append(out, instruction{op: strings.ToUpper(op), args: strings.TrimSpace(args)})
		current = ""
	}
	return out
}

// finalStage is the instructions after the last FROM, which must be scratch.
func finalStage(t *testing.T, all []instruction) (build, final []instruction) {
	t.Helper()
	last := -1
	for i, in := range all {
		if in.op == "FROM" {
			last = i
		}
	}
	require.GreaterOrEqual(t, last, 0, "no FROM")
	require.Equal(t, "scratch", all[last].args, "the final stage starts from scratch: no shell, no package manager")
	return all[:last], all[last+1:]
}

// dockerLabels parses LABEL k="v" k2="v2" pairs.
func dockerLabels(t *testing.T, args string) map[string]string {
	t.Helper()
	labels := map[string]string{}
	for rest := strings.TrimSpace(args); rest != ""; rest = strings.TrimSpace(rest) {
		key, value, ok := strings.Cut(rest, "=")
		require.True(t, ok, "LABEL %q", rest)
		require.True(t, strings.HasPrefix(value, `"`), "quote LABEL values: %q", value)
		end := strings.Index(value[1:], `"`) + 1
		labels[key] = value[1:end]
		rest = value[end+1:]
	}
	return labels
}

// TestDockerfileBuildsTheSameImage checks the root Dockerfile against what
// make image builds: user, entrypoint, PATH, label keys and fixed values, where
// every file lands, and how the binary is compiled. It cannot run Docker here.
func TestDockerfileBuildsTheSameImage(t *testing.T) {
	build, final := finalStage(t, parseDockerfile(t, "../../Dockerfile"))

	labels := map[string]string{}
	var copies []string
	var user, entrypoint, env string
	for _, in := range final {
		switch in.op {
		case "LABEL":
			maps.Copy(labels, dockerLabels(t, in.args))
		case "COPY":
			copies = append(copies, in.args)
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			entrypoint = in.args
		case "ENV":
			env = in.args
		case "ARG":
		default:
			t.Errorf("unexpected %s in the final stage: %s", in.op, in.args)
		}
	}
	require.Equal(t, User, user)
	var ep []string
	require.NoError(t, json.Unmarshal([]byte(entrypoint), &ep), "ENTRYPOINT in exec form")
	require.Equal(t, Entrypoint, ep)
	require.Equal(t, PathEnv, env)

	require.ElementsMatch(t, slices.Collect(maps.Keys(testMeta.Labels())), slices.Collect(maps.Keys(labels)))
	require.Equal(t, Source, labels[LabelSource])
	require.Equal(t, Licenses, labels[LabelLicenses])
	require.Equal(t, testMeta.Labels()[LabelDescription], labels[LabelDescription])
	require.Contains(t, labels[LabelCACertificates], "debian ca-certificates")

	require.Contains(t, copies, "tools/image/rootfs/etc/passwd tools/image/rootfs/etc/group /etc/",
		"passwd and group are the files the Go builder embeds")
	require.Contains(t, copies, "--from=certs "+CABundlePath+" "+CABundlePath)
	require.Contains(t, copies, "--from=certs --chown=65532:65532 /home/nonroot /home/nonroot")
	require.Contains(t, copies, "--from=build /out/arcflow /out/arcflow-webhook "+path.Dir(BinaryPath)+"/")
	require.Equal(t, path.Dir(BinaryPath), path.Dir(WebhookBinaryPath))
	require.Len(t, copies, 4, "nothing else lands in the image")

	var goBuild string
	for _, in := range build {
		if in.op == "RUN" && strings.Contains(in.args, "go build") {
			goBuild = in.args
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags "-s -w -X main.version=$VERSION"`,
		"-tags " + buildtags.With() + ` -ldflags "-s -w -X main.version=$VERSION" -o /out/arcflow ./cmd/arcflow`,
		"-tags " + buildtags.With(buildtags.WebhookOnly) + ` -ldflags "-s -w -X main.version=$VERSION" -o /out/arcflow-webhook ./cmd/arcflow`} {
		require.Contains(t, goBuild, want, "the tags CompileArcflow builds with")
	}
}

// TestArcflowDoesNotLinkTheImageBuilder: only tools/cmd/arcflow-image and tests
// import go-containerregistry.
func TestArcflowDoesNotLinkTheImageBuilder(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	cmd := exec.Command("go", "list", "-deps", "./cmd/arcflow")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	deps := string(out)
	require.Contains(t, deps, "go.temporal.io/sdk/client", "the dependency list is real")
	require.NotContains(t, deps, "github.com/google/go-containerregistry")
	require.NotContains(t, deps, "github.com/arcflow/arcflow/tools/image")
}
