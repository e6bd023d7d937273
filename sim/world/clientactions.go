package world

import "context"

// Temporal SDK operations billed as Actions that leave no trace in a history.
var (
	heartbeatOperations = []string{"RecordActivityTaskHeartbeat", "RecordActivityTaskHeartbeatById"}
	queryOperations     = []string{"QueryWorkflow"}
)

// ClientActions counts the activity heartbeats that reached the server and the
// queries sent, from the Temporal SDK's temporal_request counters (less
// temporal_request_failure) on the /metrics of each arcflow process given. The
// SDK throttles RecordHeartbeat calls; the counter is of the requests it sent.
func ClientActions(ctx context.Context, metricsURLs ...string) (Actions, error) {
	ok := map[string]float64{}
	for _, url := range metricsURLs {
		families, err := scrape(ctx, url)
		if err != nil {
			return Actions{}, err
		}
		for family, sign := range map[string]float64{"temporal_request": 1, "temporal_request_failure": -1} {
			for _, m := range families[family].GetMetric() {
				ok[labelsOf(m)["operation"]] += sign * m.GetCounter().GetValue()
			}
		}
	}
	sum := func(ops []string) int {
		total := 0.0
		for _, op := range ops {
			total += ok[op]
		}
		return int(total)
	}
	return Actions{Heartbeats: sum(heartbeatOperations), Queries: sum(queryOperations)}, nil
}

// Since is the heartbeats and queries counted since an earlier ClientActions.
func (a Actions) Since(base Actions) Actions {
	return Actions{Heartbeats: a.Heartbeats - base.Heartbeats, Queries: a.Queries - base.Queries}
}
