package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/workflows/contract"
)

const webhookSecret = "e2e-webhook-secret"

// delivery is one signed workflow_job delivery built from a real GitHub payload.
type delivery struct {
	id     string
	action string
	body   []byte
}

func jobDelivery(t *testing.T, id string, action string, jobID int64) delivery {
	file := "workflow_job.queued.payload.json"
	if action == "completed" {
		file = "workflow_job.completed.success.with-organization.payload.json"
	}
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "webhook", "testdata", file))
	require.NoError(t, err)
	var payload map[string]any
	require.NoError(t, json.Unmarshal(data, &payload))
	payload["workflow_job"].(map[string]any)["id"] = jobID
	body, err := json.Marshal(payload)
	require.NoError(t, err)
	return delivery{id: id, action: action, body: body}
}

func (d delivery) send(t *testing.T, url string) (int, string) {
	mac := hmac.New(sha256.New, []byte(webhookSecret))
	mac.Write(d.body)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(d.body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "workflow_job")
	req.Header.Set("X-GitHub-Delivery", d.id)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(text)
}

func freePort(t *testing.T) int {
	ports, err := localstack.FreePorts(1)
	require.NoError(t, err)
	return ports[0]
}

// startWebhook runs `arcflow webhook` for the world's namespace and waits until it serves.
func (w *poolWorld) startWebhook() string {
	port := freePort(w.t)
	startProcess(w.t, append(temporalEnv(w.ns),
		"KUBECONFIG="+stack.Kubeconfig, "GITHUB_WEBHOOK_SECRET_TOKEN="+webhookSecret, "ARCFLOW_DEFAULT_SCALE_DOWN_DELAY=5s",
	), "webhook", fmt.Sprintf("--webhook-addr=127.0.0.1:%d", port), "--watch-namespace="+w.ns, "--log-level=warn")
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	w.eventually("the webhook server answers", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return base + "/webhook"
}

const hraManifest = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: hello
spec:
  replicas: 0
  template:
    spec:
      repository: Codertocat/Hello-World
      labels: [ubuntu-latest]
---
apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: hello
spec:
  scaleTargetRef:
    name: hello
  minReplicas: 0
  maxReplicas: 5
  scaleDownDelaySecondsAfterScaleOut: 5
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`

func TestSignedWebhooksScaleUpAndDownWhateverTheOrder(t *testing.T) {
	parallel(t)
	w := startPoolWorld(t, "webhook-scale")
	url := w.startWebhook()
	w.apply(hraManifest)
	w.eventually("the autoscaler runs", func() bool {
		out, err := stack.JSONPath(w.ctx, w.ns, "hra", "hello", `{.status.conditions[?(@.type=="Accepted")].status}`)
		return err == nil && out == "True"
	})

	// In order: three jobs queued.
	sentAt := time.Now()
	for i, id := range []int64{101, 102, 103} {
		status, text := jobDelivery(t, fmt.Sprintf("q%d", i), "queued", id).send(t, url)
		require.Equal(t, http.StatusAccepted, status, text)
	}
	w.eventually("3 runners for 3 queued jobs", func() bool { return w.converged("hello", 3, "") })
	t.Logf("3 queued deliveries -> 3 registered runners in %v", time.Since(sentAt).Round(10*time.Millisecond))
	t.Log("\n" + w.kubectlGet("hra,rdeploy"))

	// The same deliveries again, shuffled, and one completion: 2 jobs remain.
	resend := []delivery{
		jobDelivery(t, "c102", "completed", 102), jobDelivery(t, "q2", "queued", 103),
		jobDelivery(t, "q0", "queued", 101), jobDelivery(t, "c102", "completed", 102), jobDelivery(t, "q1", "queued", 102),
	}
	for _, d := range resend {
		status, text := d.send(t, url)
		require.Equal(t, http.StatusAccepted, status, text)
	}
	w.eventually("2 runners after the delay", func() bool { return w.converged("hello", 2, "") })

	// A fresh set in shuffled order, completion first: it ends where in-order would.
	for _, d := range []delivery{
		jobDelivery(t, "c201", "completed", 201), jobDelivery(t, "q202", "queued", 202),
		jobDelivery(t, "q201", "queued", 201), jobDelivery(t, "q202-again", "queued", 202),
	} {
		status, text := d.send(t, url)
		require.Equal(t, http.StatusAccepted, status, text)
	}
	w.eventually("3 runners: 101, 103 and 202", func() bool { return w.converged("hello", 3, "") })

	// Force scaling from the temporal CLI, exactly as the README says.
	out, err := temporalCLI(w.ctx, w.ns, "workflow", "signal", "--workflow-id", contract.AutoscalerWorkflowID(w.ns, "hello"),
		"--name", "force-scale", "--input", `{"replicas":4,"duration":"3s"}`)
	require.NoError(t, err, out)
	w.eventually("4 runners while forced", func() bool { return w.converged("hello", 4, "") })
	w.eventually("back to 3 after the force ends and the delay", func() bool { return w.converged("hello", 3, "") })

	for _, id := range []int64{101, 103, 202} {
		status, text := jobDelivery(t, fmt.Sprintf("done-%d", id), "completed", id).send(t, url)
		require.Equal(t, http.StatusAccepted, status, text)
	}
	w.eventually("no runners after the scale-down delay", func() bool { return w.converged("hello", 0, "") })
	t.Log("\n" + w.kubectlGet("hra,rdeploy"))

	latencies := w.signalLatencies()
	t.Logf("webhook accepted -> pool scale signal: %d samples, p50 %v, p99 %v", len(latencies), percentile(latencies, 50), percentile(latencies, 99))
}

// signalLatencies pairs each job signal of the autoscaler with the next scale
// signal of the pool, from the two workflows' histories.
func (w *poolWorld) signalLatencies() []time.Duration {
	tc := dialTemporal(w.t, w.ns)
	signals := func(id, name string) []time.Time {
		iter := tc.GetWorkflowHistory(w.ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var at []time.Time
		for iter.HasNext() {
			ev, err := iter.Next()
			require.NoError(w.t, err)
			if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == name {
				at = append(at, ev.GetEventTime().AsTime())
			}
		}
		return at
	}
	jobs := signals(contract.AutoscalerWorkflowID(w.ns, "hello"), contract.SignalJob)
	scales := signals(contract.PoolWorkflowID(w.ns, "RunnerDeployment", "hello"), contract.SignalScale)
	// For each scale signal: the time since the first job signal it answers (the
	// first one after the previous scale signal). Scale-downs held by the delay are
	// not webhook latency and are left out.
	var out []time.Duration
	var prev time.Time
	for _, s := range scales {
		for _, j := range jobs {
			if j.After(prev) && !j.After(s) {
				if lat := s.Sub(j); lat < 4*time.Second {
					out = append(out, lat)
				}
				break
			}
		}
		prev = s
	}
	return out
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, (len(s)*p+99)/100-1)].Round(time.Millisecond)
}
