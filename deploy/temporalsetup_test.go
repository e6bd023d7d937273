package deploy_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// With a Temporal of the user's own, the worker sets it up at start (the
// namespace and arcflow's search attributes), unless temporal.setup is false;
// the bundled Temporal creates both itself, so the worker is not asked to.
func TestTheWorkerSetsUpAnExternalTemporal(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		want   string // "" when not set
	}{
		{"bundled Temporal", nil, ""},
		{"external Temporal", []string{"--set", "temporal.address=temporal.example.com:7233"}, "true"},
		{"external Temporal, setup off", []string{"--set", "temporal.address=temporal.example.com:7233", "--set", "temporal.setup=false"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			worker := container(t, objects(t, helmTemplate(t, c.values...)), release+"-worker")
			got := envOrNil(worker, "ARCFLOW_SETUP_TEMPORAL")
			if c.want == "" {
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got, "ARCFLOW_SETUP_TEMPORAL")
			require.Equal(t, c.want, got["value"])
		})
	}
}
