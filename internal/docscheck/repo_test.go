package docscheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRepositoryDocs runs every check on this repository (make lint runs it).
// It builds cmd/arcflow for the commands' --help and runs the helm-docs of
// make tools; with -short and no helm-docs it skips.
func TestRepositoryDocs(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	helmDocs := filepath.Join(root, ".tools", "bin", "helm-docs")
	if _, err := os.Stat(helmDocs); err != nil {
		if testing.Short() {
			t.Skip("no helm-docs: run make tools")
		}
		t.Fatalf("no %s: run make tools", helmDocs)
	}

	bin := filepath.Join(t.TempDir(), "arcflow")
	build := exec.Command("go", "build", "-o", bin, "./cmd/arcflow")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	// Defaults come from the environment (TEMPORAL_ADDRESS, POD_NAMESPACE,
	// ...): document the ones an empty environment gives.
	env := []string{"PATH=" + os.Getenv("PATH")}
	usage := exec.Command(bin, "--help")
	usage.Env = env
	out, err = usage.CombinedOutput()
	require.NoError(t, err, string(out))
	repo := Repo{Root: root, Commands: ParseCommands(string(out)), Help: map[string]string{}}
	require.Subset(t, repo.Commands, []string{"worker", "webhook", "all", "setup", "status", "scale"}, string(out))
	for _, cmd := range repo.Commands {
		help := exec.Command(bin, cmd, "--help")
		help.Env = env
		out, _ := help.CombinedOutput() // --help exits 0, or 2 on older flag packages
		require.Contains(t, string(out), "-temporal-address", "arcflow %s --help", cmd)
		repo.Help[cmd] = string(out)
	}

	gen := exec.Command(helmDocs, "--chart-search-root", "deploy/helm", "--skip-version-footer", "--dry-run", "--log-level", "warning")
	gen.Dir = root
	generated, err := gen.Output()
	require.NoError(t, err)
	repo.HelmDocs = string(generated)

	problems, err := repo.Check()
	require.NoError(t, err)
	var lines []string
	for _, p := range problems {
		lines = append(lines, p.String())
	}
	require.Empty(t, problems, "documentation problems:\n%s", strings.Join(lines, "\n"))
}
