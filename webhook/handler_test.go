package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/internal/hraspec"
	"github.com/arcflow/arcflow/workflows/contract"
)

var secret = []byte("test-secret")

// recorder stands in for Temporal: it records signals, or fails like an
// unreachable server.
type recorder struct {
	mu      sync.Mutex
	signals []contract.JobEvent
	ids     []string
	down    bool
}

func (r *recorder) SignalWithStartWorkflow(_ context.Context, id, _ string, arg any, _ client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		return nil, errors.New("connection refused")
	}
	r.signals = append(r.signals, arg.(contract.JobEvent))
	r.ids = append(r.ids, id)
	return nil, nil
}

// oneHRA matches every job of Codertocat/Hello-World, with one more HRA to
// spill over to.
type oneHRA struct{}

func (oneHRA) Find(job Job) (Match, bool) {
	if job.Repository != "Codertocat/Hello-World" {
		return Match{}, false
	}
	hra := &v1alpha1.HorizontalRunnerAutoscaler{}
	hra.Namespace, hra.Name = "ci", "hello"
	hra.Spec = v1alpha1.HorizontalRunnerAutoscalerSpec{
		ScaleTargetRef: v1alpha1.ScaleTargetRef{Name: "hello-runners"}, MinReplicas: ptr.To(0), MaxReplicas: ptr.To(3),
	}
	return Match{HRA: hra, Target: hraspec.Target{Kind: v1alpha1.KindRunnerDeployment, Name: "hello-runners",
		Config: v1alpha1.RunnerConfig{Repository: "Codertocat/Hello-World"}}, Overflow: []string{"hra/ci/spare"}}, true
}

func newTestServer(t *testing.T, rec *recorder) (*Server, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	s, err := New(Config{Secret: secret, MaxBodyBytes: 64 << 10}, oneHRA{}, rec, reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	return s, reg
}

func fixture(t testing.TB, name string) []byte {
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return data
}

func sign(body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func deliver(s *Server, event, delivery string, body []byte, signature string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	if signature != "" {
		req.Header.Set("X-Hub-Signature-256", signature)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec
}

func TestSignedQueuedDeliverySignalsTheAutoscaler(t *testing.T) {
	rec := &recorder{}
	s, reg := newTestServer(t, rec)
	body := fixture(t, "workflow_job.queued.payload.json")
	resp := deliver(s, "workflow_job", "delivery-1", body, sign(body))
	require.Equal(t, http.StatusAccepted, resp.Code, resp.Body.String())
	require.Equal(t, "scaled ci/hello by +1", resp.Body.String())
	require.Equal(t, []string{"hra/ci/hello"}, rec.ids)
	require.Equal(t, contract.JobEvent{DeliveryID: "delivery-1", JobID: 289782451, RunID: 2202229078, Action: "queued", Repository: "Codertocat/Hello-World",
		QueuedAt: time.Date(2021, time.September, 13, 2, 21, 13, 0, time.UTC), Overflow: []string{"hra/ci/spare"}}, rec.signals[0],
		"a queued job names where it may spill over, and when GitHub queued it")
	require.Equal(t, 1.0, testutil.ToFloat64(s.metrics.deliveries.WithLabelValues("workflow_job", "accepted")))
	_ = reg
}

func TestDeliveries(t *testing.T) {
	for _, tc := range []struct {
		name, event, file string
		mutate            func([]byte) []byte
		signature         func([]byte) string
		down              bool
		status            int
		text              string
		signalled         bool
	}{
		{name: "completed with a runner scales down", event: "workflow_job", file: "workflow_job.completed.success.with-organization.payload.json", status: 202, text: "scaled ci/hello by -1", signalled: true},
		{name: "failed jobs scale down too", event: "workflow_job", file: "workflow_job.completed.failure.with-organization.payload.json", status: 202, text: "by -1", signalled: true},
		{name: "in_progress names its runner as busy", event: "workflow_job", file: "workflow_job.in_progress.payload.json", status: 202, text: "runner GitHub Actions 5 of ci/hello is busy", signalled: true},
		{name: "in_progress without a runner is ignored", event: "workflow_job", file: "workflow_job.in_progress.payload.json",
			mutate: func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"runner_name": "GitHub Actions 5"`), []byte(`"runner_name": null`), 1)
			}, status: 200, text: "ignored: in_progress without a runner"},
		{name: "waiting is ignored", event: "workflow_job", file: "workflow_job.waiting.payload.json", status: 200, text: "ignored: action waiting"},
		{name: "a job no HRA matches", event: "workflow_job", file: "workflow_job.queued.with-deployment.payload.json", status: 200, text: "no horizontalrunnerautoscaler to scale for this github event"},
		{name: "skipped completions are ignored", event: "workflow_job", file: "workflow_job.completed.success.with-organization.payload.json",
			mutate: func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"conclusion": "success"`), []byte(`"conclusion": "skipped"`), 1)
			}, status: 200, text: "ignored: skipped job"},
		{name: "check-run style completions are ignored", event: "workflow_job", file: "workflow_job.completed.success.with-organization.payload.json",
			mutate: func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"runner_id": 5`), []byte(`"runner_id": null`), 1)
			}, status: 200, text: "completion without a runner"},
		{name: "ping gets pong", event: "ping", file: "ping.payload.json", status: 200, text: "pong"},
		{name: "other events get 2xx with a reason", event: "push", file: "push.payload.json", status: 202, text: "not push"},
		{name: "check_run is not scaled on", event: "check_run", file: "check_run.completed.payload.json", status: 202, text: "not check_run"},
		{name: "a bad signature is refused", event: "workflow_job", file: "workflow_job.queued.payload.json", signature: func([]byte) string { return sign([]byte("other")) }, status: 401},
		{name: "a missing signature is refused", event: "workflow_job", file: "workflow_job.queued.payload.json", signature: func([]byte) string { return "" }, status: 401},
		{name: "malformed JSON", event: "workflow_job", file: "workflow_job.queued.payload.json", mutate: func(b []byte) []byte { return b[:len(b)/2] }, status: 400},
		{name: "an oversized body", event: "workflow_job", file: "workflow_job.queued.payload.json", mutate: func(b []byte) []byte { return append(b, bytes.Repeat([]byte(" "), 70<<10)...) }, status: 413},
		{name: "temporal down: 503 so GitHub may redeliver", event: "workflow_job", file: "workflow_job.queued.payload.json", down: true, status: 503, text: "temporal is unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{down: tc.down}
			s, _ := newTestServer(t, rec)
			body := fixture(t, tc.file)
			if tc.mutate != nil {
				body = tc.mutate(body)
			}
			sig := sign(body)
			if tc.signature != nil {
				sig = tc.signature(body)
			}
			resp := deliver(s, tc.event, "d", body, sig)
			require.Equal(t, tc.status, resp.Code, resp.Body.String())
			require.Contains(t, resp.Body.String(), tc.text)
			require.Equal(t, tc.signalled, len(rec.signals) == 1)
			if tc.signalled {
				require.Empty(t, rec.signals[0].Overflow, "a completion follows its job from the first autoscaler")
			}
			require.NotContains(t, resp.Body.String(), string(secret))
		})
	}
}

func TestServerRefusesToStartWithoutASecret(t *testing.T) {
	_, err := New(Config{}, oneHRA{}, &recorder{}, prometheus.NewRegistry(), slog.Default())
	require.ErrorContains(t, err, "GITHUB_WEBHOOK_SECRET_TOKEN")
	_, err = New(Config{Insecure: true}, oneHRA{}, &recorder{}, prometheus.NewRegistry(), slog.Default())
	require.NoError(t, err)
}

func TestHealthAndMetrics(t *testing.T) {
	s, _ := newTestServer(t, &recorder{})
	for path, want := range map[string]string{"/healthz": "ok", "/": "webhook server is running", "/metrics": "arcflow_webhook_signal_seconds"} {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, 200, rec.Code)
		require.True(t, strings.Contains(rec.Body.String(), want), path)
	}
}

// FuzzHandler: whatever a signed body holds, the server answers 2xx or 4xx, never
// 5xx (Temporal is up) and never panics.
func FuzzHandler(f *testing.F) {
	for _, name := range []string{"workflow_job.queued.payload.json", "workflow_job.completed.success.with-organization.payload.json", "ping.payload.json"} {
		f.Add("workflow_job", fixture(f, name))
	}
	f.Add("push", []byte(`{}`))
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		s, _ := newTestServer(t, &recorder{})
		resp := deliver(s, event, "fuzz", body, sign(body))
		require.Less(t, resp.Code, 500, resp.Body.String())
	})
}
