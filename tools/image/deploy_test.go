package image

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, into))
}

// TestChartAndKustomizeDeployThisImage: the Helm chart and the kustomize base
// name the repository the release pushes to, and the same tag: the chart's
// appVersion (its image.tag default) and the base's newTag.
func TestChartAndKustomizeDeployThisImage(t *testing.T) {
	var values struct {
		Image struct{ Repository, Tag string }
	}
	readYAML(t, "../../deploy/helm/arcflow/values.yaml", &values)
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	readYAML(t, "../../deploy/helm/arcflow/Chart.yaml", &chart)
	var kustomization struct {
		Images []struct {
			Name    string `json:"name"`
			NewName string `json:"newName"`
			NewTag  string `json:"newTag"`
		} `json:"images"`
	}
	readYAML(t, "../../deploy/kustomize/base/kustomization.yaml", &kustomization)

	require.Equal(t, Repository, values.Image.Repository)
	require.Empty(t, values.Image.Tag, "image.tag defaults to the chart's appVersion")
	require.Len(t, kustomization.Images, 1)
	require.Equal(t, "arcflow", kustomization.Images[0].Name)
	require.Equal(t, Repository, kustomization.Images[0].NewName)
	require.Equal(t, chart.AppVersion, kustomization.Images[0].NewTag)
	require.Equal(t, Repository+":"+chart.AppVersion, Tag(chart.AppVersion), "the appVersion is a valid image tag as it is")
}
