package buildtags

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The binaries built with the release tags link no golang.org/x/net/trace, and
// so no html/template: the reason the tags exist.
func TestTheReleaseTagsLeaveOutTheTracePages(t *testing.T) {
	for _, tags := range []string{With(), With(WebhookOnly)} {
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, "github.com/arcflow/arcflow/cmd/arcflow").Output()
		require.NoError(t, err)
		deps := strings.Fields(string(out))
		require.Contains(t, deps, "go.temporal.io/sdk/client", "the dependency list is real")
		require.NotContains(t, deps, "golang.org/x/net/trace", tags)
		require.NotContains(t, deps, "html/template", tags)
	}
}

// The Dockerfile and `make build` pass the same tags as the image builder and
// the test harnesses.
func TestEveryBuildOfArcflowUsesTheReleaseTags(t *testing.T) {
	for _, file := range []string{"Dockerfile", "Makefile"} {
		text, err := os.ReadFile(filepath.Join("..", "..", file))
		require.NoError(t, err)
		for _, line := range strings.Split(string(text), "\n") {
			if strings.Contains(line, "go build") && strings.Contains(line, "./cmd/") {
				require.Contains(t, line, Release, "%s: %s", file, line)
			}
		}
	}
}
