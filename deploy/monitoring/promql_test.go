package monitoring

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`up`: {"up"},
		`sum by (namespace) (up{job="arcflow-worker"}) == 0 or absent(up{job="arcflow-worker"})`: {"up"},
		`histogram_quantile(0.9, sum by (le) (rate(arcflow_job_startup_duration_seconds_bucket{namespace=~"$namespace"}[$__rate_interval])))`: {
			"arcflow_job_startup_duration_seconds_bucket"},
		`label_replace(histogram_quantile(0.95, sum by (namespace, le) (rate(a_bucket[5m]))), "task", "workflow", "", "") > 10 or b offset 5m`: {"a_bucket", "b"},
		`(sum(x) by (le) > 0) unless on (namespace) sum without (pod) (rate(y{code=~"2.."}[2m]))`:                                              {"x", "y"},
		`min by (credential) (github_rate_limit_remaining / github_rate_limit) < 0.1`:                                                          {"github_rate_limit", "github_rate_limit_remaining"},
		`a / on (job) group_left (pod) b * 1e3 + 0x1F - inf`:                                                                                   {"a", "b"},
		`count(count by (x) (c)) > bool 2`:                                                                                                     {"c"},
		`rate(d{l="}{[(\""}[5m:1m])`:                                                                                                           {"d"},
	} {
		require.Equal(t, want, MetricNames(expr), expr)
	}
}

func TestFamily(t *testing.T) {
	families := map[string]bool{"h_seconds": true, "c_total": true, "g_count": true}
	for name, want := range map[string]string{
		"h_seconds_bucket": "h_seconds", "h_seconds_sum": "h_seconds", "c_total": "c_total",
		"g_count": "g_count", "missing_bucket": "missing_bucket",
	} {
		require.Equal(t, want, Family(name, families), name)
	}
}
