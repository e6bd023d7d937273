package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// post sends a signed delivery and returns its status; unlike send it is safe to
// call from any goroutine.
func (d delivery) post(url string) (int, error) {
	mac := hmac.New(sha256.New, []byte(webhookSecret))
	mac.Write(d.body)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(d.body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "workflow_job")
	req.Header.Set("X-GitHub-Delivery", d.id)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, resp.Body.Close()
}

// postAll sends every delivery at once and requires a 202 for each.
func postAll(t *testing.T, url string, ds []delivery) {
	statuses := make([]int, len(ds))
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	for i, d := range ds {
		wg.Go(func() { statuses[i], errs[i] = d.post(url) })
	}
	wg.Wait()
	for i := range ds {
		require.NoError(t, errs[i])
		require.Equal(t, http.StatusAccepted, statuses[i], ds[i].id)
	}
}

// TestABurstOfWebhooksReachesTheAutoscalerOnceEach: concurrent deliveries for one
// autoscaler are group-committed into fewer signals, and every one of them is in
// exactly one signal of the workflow's history and in its reservations.
func TestABurstOfWebhooksReachesTheAutoscalerOnceEach(t *testing.T) {
	parallel(t)
	w := startPoolWorld(t, "webhook-burst")
	url := w.startWebhook()
	w.apply(hraManifest)
	w.eventually("the autoscaler runs", func() bool {
		out, err := stack.JSONPath(w.ctx, w.ns, "hra", "hello", `{.status.conditions[?(@.type=="Accepted")].status}`)
		return err == nil && out == "True"
	})

	const n = 60
	var burst []delivery
	for i := range n {
		burst = append(burst, jobDelivery(t, fmt.Sprintf("burst-%d", i), "queued", int64(5000+i)))
	}
	postAll(t, url, burst)
	postAll(t, url, burst) // GitHub's redeliveries: answered again, changing nothing

	tc := dialTemporal(t, w.ns)
	id := contract.AutoscalerWorkflowID(w.ns, "hello")
	// A 202 means the signal is in the history; the workflow applies it in its next
	// workflow task, so the query may run before that.
	var state workflows.AutoscalerState
	w.eventually("every signalled job reserved", func() bool {
		value, err := tc.QueryWorkflow(w.ctx, id, "", contract.QueryState)
		if err != nil || value.Get(&state) != nil {
			return false
		}
		return len(state.Reservations.Active) >= n
	})
	require.Len(t, state.Reservations.Active, n, "one reservation per job")
	for _, d := range burst {
		require.Contains(t, state.Reservations.Deliveries, d.id)
	}

	carried, signals := map[string]int{}, 0
	dc := converter.GetDefaultDataConverter()
	iter := tc.GetWorkflowHistory(w.ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		attrs := ev.GetWorkflowExecutionSignaledEventAttributes()
		var events []contract.JobEvent
		switch attrs.GetSignalName() {
		case contract.SignalJob:
			var one contract.JobEvent
			require.NoError(t, dc.FromPayloads(attrs.GetInput(), &one))
			events = []contract.JobEvent{one}
		case contract.SignalJobs:
			require.NoError(t, dc.FromPayloads(attrs.GetInput(), &events))
		default:
			continue
		}
		signals++
		for _, e := range events {
			carried[e.DeliveryID]++
		}
	}
	require.Len(t, carried, n)
	for _, d := range burst {
		require.Equal(t, 2, carried[d.id], "%s: in one signal per delivery attempt, no more", d.id)
	}
	t.Logf("%d deliveries (%d jobs, each delivered twice) reached the autoscaler in %d signals", 2*n, n, signals)
	require.Less(t, signals, 2*n, "concurrent deliveries share signals")
}
