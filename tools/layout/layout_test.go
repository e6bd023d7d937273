package layout

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/tools/buildtags"
)

const module = "github.com/arcflow/arcflow"

// outsideWorld are the trees that never ship: the simulated world and the local
// stack, the developer tools, and the full-stack tests.
var outsideWorld = []string{module + "/sim", module + "/tools", module + "/test"}

// workflowDeps are the arcflow packages the workflows may link: values and
// names, no I/O.
var workflowDeps = map[string]bool{
	module + "/workflows":          true,
	module + "/workflows/contract": true,
	module + "/activities/calls":   true,
	module + "/api/v1alpha1":       true,
	module + "/github/registry":    true,
}

// ioModules are third-party packages that talk to the outside world.
var ioModules = []string{"github.com/google/go-github", "k8s.io/client-go"}

type pkg struct {
	ImportPath string
	Deps       []string
}

func list(t *testing.T, args ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Deps"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		t.Fatalf("go list %v: %v\n%s", args, err, exitErr.Stderr)
	}
	require.NoError(t, err)
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs = append(pkgs, p)
	}
	require.NotEmpty(t, pkgs, "go list %v listed packages", args)
	return pkgs
}

func under(path string, trees []string) bool {
	for _, tree := range trees {
		if path == tree || strings.HasPrefix(path, tree+"/") {
			return true
		}
	}
	return false
}

func TestTheShippedBinaryLinksNothingOfTheSimulatedWorld(t *testing.T) {
	for _, tags := range []string{buildtags.With(), buildtags.With(buildtags.WebhookOnly)} {
		shipped := list(t, "-tags", tags, "./cmd/arcflow")[0]
		require.Contains(t, shipped.Deps, module+"/webhook", "the dependency list is real")
		for _, dep := range shipped.Deps {
			require.False(t, under(dep, outsideWorld), "cmd/arcflow (tags %s) links %s", tags, dep)
		}
	}
}

func TestInternalHoldsOnlyWhatShips(t *testing.T) {
	shipped := map[string]bool{}
	for _, dep := range list(t, "-tags", buildtags.With(), "./cmd/arcflow")[0].Deps {
		shipped[dep] = true
	}
	for _, p := range list(t, "./internal/...") {
		require.True(t, shipped[p.ImportPath], "%s is under internal/ but cmd/arcflow does not link it: it belongs with what uses it", p.ImportPath)
	}
}

func TestNoProductPackageImportsTheSimulatedWorld(t *testing.T) {
	for _, p := range list(t, "./...") {
		if under(p.ImportPath, outsideWorld) {
			continue
		}
		for _, dep := range p.Deps {
			require.False(t, under(dep, outsideWorld), "%s links %s", p.ImportPath, dep)
		}
	}
}

func TestTheWorkflowsLinkNothingThatDoesIO(t *testing.T) {
	for _, p := range list(t, "./workflows", "./workflows/contract") {
		for _, dep := range p.Deps {
			if strings.HasPrefix(dep, module+"/") {
				require.True(t, workflowDeps[dep], "%s links %s, which is not among the I/O-free packages workflows may use", p.ImportPath, dep)
			}
			require.False(t, under(dep, ioModules), "%s links %s", p.ImportPath, dep)
		}
	}
}
