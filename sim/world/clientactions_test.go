package world

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

func metricsServer(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func TestClientActions(t *testing.T) {
	worker := metricsServer(t, `# TYPE temporal_request counter
temporal_request{namespace="default",operation="RecordActivityTaskHeartbeat"} 12
temporal_request{namespace="default",operation="RecordActivityTaskHeartbeatById"} 1
temporal_request{namespace="default",operation="PollActivityTaskQueue"} 400
temporal_request{namespace="default",operation="QueryWorkflow"} 2
# TYPE temporal_request_failure counter
temporal_request_failure{namespace="default",operation="RecordActivityTaskHeartbeat"} 3
`)
	webhook := metricsServer(t, `# TYPE temporal_request counter
temporal_request{namespace="default",operation="SignalWithStartWorkflowExecution"} 40
temporal_request{namespace="default",operation="QueryWorkflow"} 1
`)
	ctx := context.Background()
	got, err := ClientActions(ctx, worker, webhook)
	if err != nil {
		t.Fatal(err)
	}
	// 12+1-3 heartbeats reached the server; 2+1 queries. Polls and signals are
	// not counted here (signals are in the histories).
	if want := (Actions{Heartbeats: 10, Queries: 3}); got != want {
		t.Fatalf("ClientActions = %+v, want %+v", got, want)
	}
	if since := got.Since(Actions{Heartbeats: 4, Queries: 1, Signals: 9}); since != (Actions{Heartbeats: 6, Queries: 2}) {
		t.Fatalf("Since = %+v", since)
	}
	if _, err := ClientActions(ctx, "http://127.0.0.1:1/metrics"); err == nil {
		t.Fatal("ClientActions of an unreachable /metrics: no error")
	}
}
