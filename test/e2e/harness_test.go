package e2e

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/worker"
)

// arcflowWorld is arcflow running on the real stack: a Temporal worker with the real
// activities, the pod watcher, a fake GitHub and simulated runners registering in it.
type arcflowWorld struct {
	kube     kubernetes.Interface
	temporal client.Client
	github   *fakegithub.Server
	client   *github.Client
}

func startWorld(t *testing.T, namespace string) *arcflowWorld {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	useTemporalNamespace(t, ctx, namespace)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	kube, err := stack.Kube()
	require.NoError(t, err)
	gh, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = gh.Close() })
	ghClient, err := github.New(github.Config{Token: "ghp_e2e", URL: gh.URL}, github.Options{})
	require.NoError(t, err)
	tc := dialTemporal(t, namespace)

	dyn, err := dynamic.NewForConfig(stack.RESTConfig)
	require.NoError(t, err)
	w := worker.New(tc,
		&activities.Kubernetes{Client: kube, Dynamic: dyn, Tokens: ghClient, Defaults: activities.DefaultPodDefaults()},
		&activities.GitHub{Registry: ghClient, Jobs: ghClient}, nil, worker.Settings{GroupRunnerEnds: true})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	watcher := worker.NewPodWatcher(kube, tc, namespace, log)
	go func() { _ = watcher.Run(ctx, 2) }()
	registrar := &sim.Runners{Kube: kube, GitHub: gh, Namespace: namespace, Log: log, ManualJobs: true, RegisterDelay: time.Millisecond}
	go func() { _ = registrar.Run(ctx) }()
	return &arcflowWorld{kube: kube, temporal: tc, github: gh, client: ghClient}
}
