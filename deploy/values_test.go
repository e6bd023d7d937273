package deploy_test

import (
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// tuning sets every value docs/install.md and docs/configuration.md tell
// operators to tune, each to something other than its default, so a value that
// does not reach its flag fails.
var tuning = []string{
	"--set", "reconcilePeriod=2m",
	"--set", "worker.stickyWorkflowCacheSize=25000",
	"--set", "worker.kubeApiQps=250",
	"--set", "worker.kubeApiBurst=600",
	"--set", "githubWebhookServer.kubeApiQps=20",
	"--set", "githubWebhookServer.kubeApiBurst=40",
	// ARC's value takes names, or {name: ...} as imagePullSecrets do.
	"--set", "image.actionsRunnerImagePullSecrets[0]=regcred",
	"--set", "image.actionsRunnerImagePullSecrets[1].name=mirror-cred",
	"--set", "arcController.lease=arc-system/arc-leader",
	"--set", "arcController.podSelector=app.kubernetes.io/instance in (arc\\,arc-old)",
	"--set", "worker.poolDeletionGracePeriod=30m",
	"--set", "runner.jitImage=registry.example.org/actions/actions-runner:2.325.0",
	"--set", "worker.extraArgs[0]=--github-budget-share=0.3",
	"--set", "worker.extraArgs[1]=--reconcile-period=3m",
	"--set", "worker.extraEnv[0].name=HTTPS_PROXY",
	"--set", "worker.extraEnv[0].value=http://proxy.example.org:3128",
	"--set", "githubWebhookServer.extraArgs[0]=--webhook-read-timeout=30s",
	"--set", "githubWebhookServer.extraEnv[0].name=GOMEMLIMIT",
	"--set", "githubWebhookServer.extraEnv[0].value=200MiB",
	"--set", "githubWebhookServer.image.tag=v0.0.9",
}

// Every tuning value becomes its flag in the process it is for; extraArgs come
// last, so one may override a value's flag (Go's flag package keeps the last).
func TestChartTuningValuesReachTheProcesses(t *testing.T) {
	t.Parallel()
	objs := objects(t, helmTemplate(t, tuning...))
	worker, webhook := container(t, objs, "arcflow-worker"), container(t, objs, "arcflow-webhook")
	wargs, hargs := args(worker), args(webhook)

	for flag, want := range map[string]string{
		"sticky-workflow-cache-size":  "25000",
		"kube-api-qps":                "250",
		"kube-api-burst":              "600",
		"runner-image-pull-secret":    "regcred,mirror-cred",
		"arc-controller-lease":        "arc-system/arc-leader",
		"arc-controller-pod-selector": "app.kubernetes.io/instance in (arc,arc-old)",
		"pool-deletion-grace-period":  "30m",
		"jit-runner-image":            "registry.example.org/actions/actions-runner:2.325.0",
		"github-budget-share":         "0.3",
		"reconcile-period":            "3m", // extraArgs over reconcilePeriod
	} {
		require.Equal(t, want, lastFlag(t, wargs, flag), "worker --%s", flag)
	}
	require.Equal(t, []string{"2m", "3m"}, flagValues(wargs, "reconcile-period"), "the value's flag, then extraArgs'")
	require.Equal(t, "--reconcile-period=3m", wargs[len(wargs)-1], "extraArgs are the last arguments")
	require.Equal(t, "http://proxy.example.org:3128", env(t, worker, "HTTPS_PROXY")["value"])

	for flag, want := range map[string]string{
		"reconcile-period":     "2m",
		"kube-api-qps":         "20",
		"kube-api-burst":       "40",
		"webhook-read-timeout": "30s",
	} {
		require.Equal(t, want, lastFlag(t, hargs, flag), "webhook --%s", flag)
	}
	require.Equal(t, "200MiB", env(t, webhook, "GOMEMLIMIT")["value"])
	require.Empty(t, flagValues(hargs, "arc-controller-lease"), "worker flags stay off the webhook")

	require.True(t, strings.HasSuffix(worker["image"].(string), ":v0.1.0"), "the worker runs the chart's appVersion: %v", worker["image"])
	require.Equal(t, "ghcr.io/arcflow/arcflow:v0.0.9", webhook["image"], "githubWebhookServer.image.tag holds the webhook back")
}

// At the defaults the chart passes the worker's own defaults, and leaves out
// what is empty: no pull secrets, no grace period (a worker without the flag
// still starts), no extra arguments or environment.
func TestChartTuningDefaults(t *testing.T) {
	t.Parallel()
	objs := objects(t, helmTemplate(t))
	worker, webhook := container(t, objs, "arcflow-worker"), container(t, objs, "arcflow-webhook")
	wargs := args(worker)
	for flag, want := range map[string]string{
		"reconcile-period":            "5m",
		"sticky-workflow-cache-size":  "10000",
		"kube-api-qps":                "100",
		"kube-api-burst":              "300",
		"arc-controller-lease":        "actions-runner-system/actions-runner-controller",
		"arc-controller-pod-selector": "app.kubernetes.io/name=actions-runner-controller",
	} {
		require.Equal(t, want, lastFlag(t, wargs, flag), "worker --%s", flag)
	}
	require.Empty(t, flagValues(wargs, "pool-deletion-grace-period"))
	require.Empty(t, flagValues(wargs, "jit-runner-image"), "the worker's own default")
	require.Empty(t, flagValues(wargs, "runner-image-pull-secret"))
	require.Equal(t, "ghcr.io/arcflow/arcflow:v0.1.0", webhook["image"])
	require.Equal(t, worker["image"], webhook["image"])

	// An empty lease is passed as it is: it turns the check off.
	worker = container(t, objects(t, helmTemplate(t, "--set", "arcController.lease=", "--set", "arcController.podSelector=")), "arcflow-worker")
	require.Equal(t, []string{""}, flagValues(args(worker), "arc-controller-lease"))
	require.Equal(t, []string{""}, flagValues(args(worker), "arc-controller-pod-selector"))
}

// Every flag the chart writes is one `arcflow worker --help` or `arcflow
// webhook --help` lists, so a misspelt flag fails here and not in a pod. The
// flags are read from docs/configuration.md, whose rows the docs check
// (tools/docscheck) holds equal to each command's --help, so this needs no
// build of arcflow.
func TestChartFlagsExist(t *testing.T) {
	t.Parallel()
	known := documentedFlags(t)
	require.True(t, known["worker"]["temporal-address"], "the configuration page lists the worker's flags")
	objs := objects(t, helmTemplate(t, tuning...))
	for deployment, command := range map[string]string{"arcflow-worker": "worker", "arcflow-webhook": "webhook"} {
		for _, a := range args(container(t, objs, deployment))[1:] {
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			require.True(t, known[command][name], "%s passes %s, which arcflow %s does not know", deployment, a, command)
		}
	}
}

// documentedFlags reads the flag tables of docs/configuration.md: for each
// command, the flags whose row names it ("every command" names them all).
func documentedFlags(t *testing.T) map[string]map[string]bool {
	data, err := os.ReadFile("../docs/configuration.md")
	require.NoError(t, err)
	known := map[string]map[string]bool{"worker": {}, "webhook": {}}
	row := regexp.MustCompile("^\\| `--([a-z0-9-]+)` \\|[^|]*\\|[^|]*\\|([^|]*)\\|")
	for _, line := range strings.Split(string(data), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for command := range known {
			if strings.Contains(m[2], command) || strings.Contains(m[2], "every command") {
				known[command][m[1]] = true
			}
		}
	}
	return known
}

// The CA for Temporal's server certificate, from a Secret or a ConfigMap: the
// same file in both Deployments, at the path the environment names.
func TestChartTemporalCA(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		values       []string
		source, from string // the volume's source and its field that names the object
		client       bool
	}{
		"secret":    {[]string{"--set", "temporal.tls.ca.secretName=temporal-ca"}, "secret", "secretName", false},
		"configMap": {[]string{"--set", "temporal.tls.ca.configMapName=temporal-ca"}, "configMap", "name", false},
		"secret beside a client certificate": {[]string{"--set", "temporal.tls.ca.secretName=temporal-ca",
			"--set", "temporal.tls.enabled=true", "--set", "temporal.tls.secretName=temporal-client-tls"}, "secret", "secretName", true},
	} {
		objs := objects(t, helmTemplate(t, append(c.values, "--set", "temporal.tls.ca.key=ca.pem", "--set", "temporal.address="+externalTemporal)...))
		for _, d := range []string{"arcflow-worker", "arcflow-webhook"} {
			ctr := container(t, objs, d)
			caPath := env(t, ctr, "TEMPORAL_TLS_SERVER_CA_CERT_PATH")["value"].(string)
			mount := volumeMount(t, ctr, path.Dir(caPath))
			vol := volume(t, find(objs, "Deployment", d), mount["name"].(string))
			from, ok := vol[c.source].(map[string]any)
			require.True(t, ok, "%s %s: volume %v", name, d, vol)
			require.Equal(t, "temporal-ca", from[c.from], "%s %s", name, d)
			require.Equal(t, []any{map[string]any{"key": "ca.pem", "path": path.Base(caPath)}}, from["items"], "%s %s", name, d)
			if c.client {
				require.Equal(t, "/etc/temporal-tls/tls.crt", env(t, ctr, "TEMPORAL_TLS_CLIENT_CERT_PATH")["value"], d)
				volumeMount(t, ctr, "/etc/temporal-tls")
			}
		}
	}
	out, err := exec.Command(tool(t, "helm"), "template", release, chartDir, "--set", "temporal.address="+externalTemporal,
		"--set", "temporal.tls.ca.secretName=a", "--set", "temporal.tls.ca.configMapName=b").CombinedOutput()
	require.Error(t, err, "a CA from two places")
	require.Contains(t, string(out), "not both")
	for _, d := range []string{"arcflow-worker", "arcflow-webhook"} {
		ctr := container(t, objects(t, helmTemplate(t)), d)
		require.NotContains(t, ctr, "volumeMounts", "no TLS, no mounts")
		require.Nil(t, envOrNil(ctr, "TEMPORAL_TLS_SERVER_CA_CERT_PATH"))
	}
}

// The webhook's LoadBalancer: source ranges and the annotations a cloud load
// balancer takes its TLS certificate from.
func TestChartWebhookLoadBalancer(t *testing.T) {
	t.Parallel()
	svc := find(objects(t, helmTemplate(t,
		"--set", "githubWebhookServer.service.type=LoadBalancer",
		"--set", "githubWebhookServer.service.port=443",
		"--set", "githubWebhookServer.service.loadBalancerSourceRanges[0]=192.30.252.0/22",
		"--set", "githubWebhookServer.service.loadBalancerSourceRanges[1]=185.199.108.0/22",
		"--set", "githubWebhookServer.service.annotations.service\\.beta\\.kubernetes\\.io/aws-load-balancer-ssl-cert=arn:aws:acm:eu-west-1:123:certificate/abc",
	)), "Service", "arcflow-webhook")
	require.Equal(t, "LoadBalancer", nested(t, svc, "spec", "type"))
	ranges, _, _ := unstructured.NestedStringSlice(svc.Object, "spec", "loadBalancerSourceRanges")
	require.Equal(t, []string{"192.30.252.0/22", "185.199.108.0/22"}, ranges)
	require.Equal(t, "arn:aws:acm:eu-west-1:123:certificate/abc", svc.GetAnnotations()["service.beta.kubernetes.io/aws-load-balancer-ssl-cert"])
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	require.EqualValues(t, 443, ports[0].(map[string]any)["port"])

	svc = find(objects(t, helmTemplate(t)), "Service", "arcflow-webhook")
	require.NotContains(t, svc.Object["spec"], "loadBalancerSourceRanges")
	require.Empty(t, svc.GetAnnotations())
}

// The Ingress of the chart and of the kustomize component serve TLS.
func TestIngressTLS(t *testing.T) {
	t.Parallel()
	ing := find(objects(t, helmTemplate(t, everythingOn...)), "Ingress", "arcflow-webhook")
	tls, _, _ := unstructured.NestedSlice(ing.Object, "spec", "tls")
	require.Equal(t, []any{map[string]any{"secretName": "arcflow-tls", "hosts": []any{"arcflow.example.org"}}}, tls)

	ing = find(objects(t, kustomizeBuild(t, overlay(t, "ingress"))), "Ingress", "arcflow-webhook")
	tls, _, _ = unstructured.NestedSlice(ing.Object, "spec", "tls")
	require.Len(t, tls, 1)
	require.Equal(t, "arcflow-webhook-tls", tls[0].(map[string]any)["secretName"])
	rules, _, _ := unstructured.NestedSlice(ing.Object, "spec", "rules")
	var hosts []any
	for _, r := range rules {
		hosts = append(hosts, r.(map[string]any)["host"])
	}
	require.Equal(t, hosts, tls[0].(map[string]any)["hosts"], "the TLS hosts are the rules' hosts")
}

// container is the one container of a Deployment's pods.
func container(t *testing.T, objs []*unstructured.Unstructured, deployment string) map[string]any {
	t.Helper()
	d := find(objs, "Deployment", deployment)
	require.NotNil(t, d, deployment)
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	require.Len(t, containers, 1, deployment)
	return containers[0].(map[string]any)
}

func args(c map[string]any) []string {
	var out []string
	for _, a := range c["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

// flagValues are the values of every --name=value in args, in order.
func flagValues(args []string, name string) []string {
	var out []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			out = append(out, v)
		}
	}
	return out
}

// lastFlag is the value the process sees: the last one given.
func lastFlag(t *testing.T, args []string, name string) string {
	t.Helper()
	values := flagValues(args, name)
	require.NotEmpty(t, values, "--%s in %v", name, args)
	return values[len(values)-1]
}

func envOrNil(c map[string]any, name string) map[string]any {
	list, _ := c["env"].([]any)
	i := slices.IndexFunc(list, func(e any) bool { return e.(map[string]any)["name"] == name })
	if i < 0 {
		return nil
	}
	return list[i].(map[string]any)
}

func env(t *testing.T, c map[string]any, name string) map[string]any {
	t.Helper()
	e := envOrNil(c, name)
	require.NotNil(t, e, "%s: no env %s", c["name"], name)
	return e
}

func volumeMount(t *testing.T, c map[string]any, mountPath string) map[string]any {
	t.Helper()
	mounts, _ := c["volumeMounts"].([]any)
	for _, m := range mounts {
		if m := m.(map[string]any); m["mountPath"] == mountPath {
			require.Equal(t, true, m["readOnly"])
			return m
		}
	}
	require.Failf(t, "no such mount", "%s: nothing mounted at %s: %v", c["name"], mountPath, mounts)
	return nil
}

func volume(t *testing.T, d *unstructured.Unstructured, name string) map[string]any {
	t.Helper()
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	for _, v := range vols {
		if v := v.(map[string]any); v["name"] == name {
			return v
		}
	}
	require.Failf(t, "no such volume", "%s: no volume %s: %v", d.GetName(), name, vols)
	return nil
}
