package deploy_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// arcValues are the runner values of arcValuesYAML, which the runner pod
// test looks for in the pod.
var arcValues = struct {
	runnerImage, dockerImage, mirror, dockerGID, runnerPullSecret, runnerURL, enterpriseURL string
}{
	runnerImage: "registry.example.org/actions-runner:v2.311.0", dockerImage: "registry.example.org/docker:24-dind",
	mirror: "https://mirror.example.org", dockerGID: "2000", runnerPullSecret: "runner-cred",
	runnerURL: "https://github-runners.example.org/", enterpriseURL: "https://github.example.org",
}

// arcValuesYAML is an ARC values file as an ARC user would have written it,
// with arcflow's image and every value the table calls "same" set to
// something other than its default (the few that cannot share a render have
// their own in arcSameChecks).
var arcValuesYAML = `
labels: {team: ci-platform}
syncPeriod: 2m
defaultScaleDownDelay: 15m
leaderElectionId: arcflow-ci
githubEnterpriseServerURL: ` + arcValues.enterpriseURL + `
githubURL: https://ghproxy.example.org/
runnerGithubURL: ` + arcValues.runnerURL + `
authSecret:
  create: true
  name: arc-github
  annotations: {owner: ci-platform}
  github_app_id: "12345"
  github_app_installation_id: "678"
  github_app_private_key: "-----BEGIN RSA PRIVATE KEY-----"
dockerRegistryMirror: ` + arcValues.mirror + `
dockerGID: ` + arcValues.dockerGID + `
image:
  repository: registry.example.org/arcflow
  tag: v9.9.9
  pullPolicy: Always
  actionsRunnerRepositoryAndTag: ` + arcValues.runnerImage + `
  dindSidecarRepositoryAndTag: ` + arcValues.dockerImage + `
  actionsRunnerImagePullSecrets: [` + arcValues.runnerPullSecret + `]
imagePullSecrets: [{name: arcflow-cred}]
rbac: {allowGrantingKubernetesContainerModePermissions: true}
serviceAccount: {create: true, annotations: {iam.example.org/role: arcflow}}
podAnnotations: {example.org/owner: ci-platform}
podLabels: {tier: control}
priorityClassName: system-cluster-critical
topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]
env: {HTTPS_PROXY: "http://proxy.example.org:3128"}
additionalVolumes: [{name: ghes-ca, configMap: {name: ghes-ca}}]
additionalVolumeMounts: [{name: ghes-ca, mountPath: /etc/ssl/ghes, readOnly: true}]
metrics:
  serviceMonitor: {enabled: true, namespace: monitoring, interval: 45s, timeout: 20s}
scope: {singleNamespace: true, watchNamespace: ci}
logLevel: debug
logFormat: json
githubWebhookServer:
  enabled: true
  replicaCount: 3
  logLevel: warn
  logFormat: text
  secret: {create: true, name: arc-webhook, github_webhook_secret_token: s3cret}
  imagePullSecrets: [{name: webhook-cred}]
  serviceAccount: {annotations: {iam.example.org/role: arcflow-webhook}}
  podAnnotations: {example.org/owner: edge}
  podLabels: {tier: edge}
  priorityClassName: high
  topologySpreadConstraints: [{maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}]
  resources: {requests: {cpu: 70m}}
  nodeSelector: {pool: edge}
  tolerations: [{key: edge, operator: Exists}]
  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {topologyKey: kubernetes.io/hostname}}]}}
  terminationGracePeriodSeconds: 45
  env: [{name: GOMEMLIMIT, value: 100MiB}]
  lifecycle: {preStop: {exec: {command: [sleep, "5"]}}}
  service: {type: LoadBalancer, annotations: {example.org/lb: internet}, loadBalancerSourceRanges: [192.30.252.0/22]}
  ingress:
    enabled: true
    ingressClassName: nginx
    annotations: {cert-manager.io/cluster-issuer: letsencrypt}
    hosts: [{host: hooks.example.org, paths: []}]
    tls: [{secretName: hooks-tls, hosts: [hooks.example.org]}]
  podDisruptionBudget: {enabled: true, minAvailable: 2}
`

// arcCheck finds a value where ARC's chart puts it, in the render of
// arcValuesYAML or, with own, in a render of its own.
type arcCheck struct {
	own   []string
	check func(t *testing.T, objs []*unstructured.Unstructured)
}

// yamlAt checks that the value at a path equals a YAML literal, decoded as
// the render is (through JSON, so numbers are float64 on both sides).
func yamlAt(kind, name, want string, path ...string) arcCheck {
	return arcCheck{check: func(t *testing.T, objs []*unstructured.Unstructured) {
		require.Equal(t, yamlValue(t, want), at(t, objs, kind, name, path...))
	}}
}

func yamlValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal([]byte(s), &v))
	return v
}

// workerFlag and webhookFlag check a process's flag (the last given).
func workerFlag(flag, want string) arcCheck  { return processFlag("arcflow-worker", flag, want) }
func webhookFlag(flag, want string) arcCheck { return processFlag("arcflow-webhook", flag, want) }
func processFlag(deployment, flag, want string) arcCheck {
	return arcCheck{check: func(t *testing.T, objs []*unstructured.Unstructured) {
		require.Equal(t, want, lastFlag(t, args(container(t, objs, deployment)), flag))
	}}
}

// bothFlag checks a flag of the worker and the webhook.
func bothFlag(flag, want string) arcCheck {
	return arcCheck{check: func(t *testing.T, objs []*unstructured.Unstructured) {
		workerFlag(flag, want).check(t, objs)
		webhookFlag(flag, want).check(t, objs)
	}}
}

func workerEnv(name, want string) arcCheck {
	return arcCheck{check: func(t *testing.T, objs []*unstructured.Unstructured) {
		require.Equal(t, want, env(t, container(t, objs, "arcflow-worker"), name)["value"])
	}}
}

// absent checks that a render of its own has no object of a kind and name.
func absent(kind, name string, values ...string) arcCheck {
	return arcCheck{own: values, check: func(t *testing.T, objs []*unstructured.Unstructured) {
		require.Nil(t, find(objs, kind, name), "%s %s", kind, name)
	}}
}

// podSpec is the path of a Deployment's pod spec, and of a field in it.
func podSpec(field ...string) []string { return append([]string{"spec", "template", "spec"}, field...) }

func workerPodAt(want string, field ...string) arcCheck {
	return yamlAt("Deployment", "arcflow-worker", want, podSpec(field...)...)
}

func webhookPodAt(want string, field ...string) arcCheck {
	return yamlAt("Deployment", "arcflow-webhook", want, podSpec(field...)...)
}

func webhookContainerAt(want, field string) arcCheck {
	return arcCheck{check: func(t *testing.T, objs []*unstructured.Unstructured) {
		require.Equal(t, yamlValue(t, want), container(t, objs, "arcflow-webhook")[field])
	}}
}

// arcSameChecks has a check for every value the table calls "same".
var arcSameChecks = map[string]arcCheck{
	"labels": {check: func(t *testing.T, objs []*unstructured.Unstructured) {
		for _, o := range objs {
			require.Equal(t, "ci-platform", o.GetLabels()["team"], "%s %s", o.GetKind(), o.GetName())
		}
	}},
	"syncPeriod":                {check: bothFlag("sync-period", "2m").check},
	"defaultScaleDownDelay":     {check: bothFlag("default-scale-down-delay", "15m").check},
	"leaderElectionId":          workerFlag("leader-election-id", "arcflow-ci"),
	"githubEnterpriseServerURL": workerEnv("GITHUB_ENTERPRISE_URL", arcValues.enterpriseURL),
	"githubURL":                 workerEnv("GITHUB_URL", "https://ghproxy.example.org/"),
	"runnerGithubURL":           workerEnv("RUNNER_GITHUB_URL", arcValues.runnerURL),
	"authSecret.enabled": {own: []string{"--set", "authSecret.enabled=false"}, check: func(t *testing.T, objs []*unstructured.Unstructured) {
		for _, name := range []string{"GITHUB_TOKEN", "GITHUB_APP_ID", "GITHUB_APP_INSTALLATION_ID", "GITHUB_APP_PRIVATE_KEY"} {
			require.Nil(t, envOrNil(container(t, objs, "arcflow-worker"), name), name)
		}
		// Without the key (an upgrade with --reuse-values of a release that
		// predates it) the credentials stay.
		worker := container(t, objects(t, helmTemplate(t, "--set", "authSecret.enabled=null")), "arcflow-worker")
		require.NotNil(t, envOrNil(worker, "GITHUB_TOKEN"))
	}},
	"authSecret.create": yamlAt("Secret", "arc-github", "Opaque", "type"),
	"authSecret.name": {check: func(t *testing.T, objs []*unstructured.Unstructured) {
		ref := env(t, container(t, objs, "arcflow-worker"), "GITHUB_APP_ID")["valueFrom"].(map[string]any)["secretKeyRef"].(map[string]any)
		require.Equal(t, "arc-github", ref["name"])
	}},
	"authSecret.annotations":                yamlAt("Secret", "arc-github", "ci-platform", "metadata", "annotations", "owner"),
	"authSecret.github_app_id":              yamlAt("Secret", "arc-github", `"12345"`, "stringData", "github_app_id"),
	"authSecret.github_app_installation_id": yamlAt("Secret", "arc-github", `"678"`, "stringData", "github_app_installation_id"),
	"authSecret.github_app_private_key":     yamlAt("Secret", "arc-github", `"-----BEGIN RSA PRIVATE KEY-----"`, "stringData", "github_app_private_key"),
	"authSecret.github_token": {own: []string{"--set", "authSecret.create=true", "--set", "authSecret.github_token=ghp_x"},
		check: yamlAt("Secret", "controller-manager", "ghp_x", "stringData", "github_token").check},
	"dockerRegistryMirror": workerFlag("docker-registry-mirror", arcValues.mirror),
	"dockerGID":            workerFlag("docker-gid", arcValues.dockerGID),
	"image.repository": {check: func(t *testing.T, objs []*unstructured.Unstructured) {
		for _, d := range []string{"arcflow-worker", "arcflow-webhook"} {
			require.Equal(t, "registry.example.org/arcflow:v9.9.9", container(t, objs, d)["image"], d)
		}
	}},
	"image.tag":                           workerPodAt(`registry.example.org/arcflow:v9.9.9`, "containers", "0", "image"),
	"image.pullPolicy":                    workerPodAt("Always", "containers", "0", "imagePullPolicy"),
	"imagePullSecrets":                    workerPodAt("[{name: arcflow-cred}]", "imagePullSecrets"),
	"image.actionsRunnerRepositoryAndTag": workerFlag("runner-image", arcValues.runnerImage),
	"image.dindSidecarRepositoryAndTag":   workerFlag("docker-image", arcValues.dockerImage),
	"image.actionsRunnerImagePullSecrets": workerFlag("runner-image-pull-secret", arcValues.runnerPullSecret),
	"fullnameOverride":                    {own: []string{"--set", "fullnameOverride=ci-arcflow"}, check: yamlAt("Deployment", "ci-arcflow-worker", "ci-arcflow-worker", "metadata", "name").check},
	"rbac.allowGrantingKubernetesContainerModePermissions": {check: func(t *testing.T, objs []*unstructured.Unstructured) {
		require.True(t, grants(t, find(objs, "Role", "arcflow-worker"))[grant{"", "serviceaccounts", "create"}])
	}},
	"serviceAccount.create":            absent("ServiceAccount", "arcflow-worker", "--set", "serviceAccount.create=false"),
	"serviceAccount.annotations":       yamlAt("ServiceAccount", "arcflow-worker", "arcflow", "metadata", "annotations", "iam.example.org/role"),
	"podAnnotations":                   yamlAt("Deployment", "arcflow-worker", "ci-platform", "spec", "template", "metadata", "annotations", "example.org/owner"),
	"podLabels":                        yamlAt("Deployment", "arcflow-worker", "control", "spec", "template", "metadata", "labels", "tier"),
	"priorityClassName":                workerPodAt("system-cluster-critical", "priorityClassName"),
	"topologySpreadConstraints":        workerPodAt("[{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]", "topologySpreadConstraints"),
	"env":                              workerEnv("HTTPS_PROXY", "http://proxy.example.org:3128"),
	"additionalVolumes":                workerPodAt("{name: ghes-ca, configMap: {name: ghes-ca}}", "volumes", "0"),
	"additionalVolumeMounts":           workerPodAt("[{name: ghes-ca, mountPath: /etc/ssl/ghes, readOnly: true}]", "containers", "0", "volumeMounts"),
	"metrics.serviceMonitor.namespace": yamlAt("ServiceMonitor", "arcflow-worker", "monitoring", "metadata", "namespace"),
	"metrics.serviceMonitor.interval":  {check: serviceMonitorEndpoint("interval", "45s")},
	"metrics.serviceMonitor.timeout":   {check: serviceMonitorEndpoint("scrapeTimeout", "20s")},
	"scope.singleNamespace":            {check: func(t *testing.T, objs []*unstructured.Unstructured) { require.Zero(t, kinds(objs)["ClusterRole"]) }},
	"scope.watchNamespace":             {check: bothFlag("watch-namespace", "ci").check},
	"logLevel":                         workerFlag("log-level", "debug"),
	"logFormat":                        workerFlag("log-format", "json"),

	"githubWebhookServer.enabled":       absent("Deployment", "arcflow-webhook", "--set", "githubWebhookServer.enabled=false"),
	"githubWebhookServer.replicaCount":  yamlAt("Deployment", "arcflow-webhook", "3", "spec", "replicas"),
	"githubWebhookServer.logLevel":      webhookFlag("log-level", "warn"),
	"githubWebhookServer.logFormat":     webhookFlag("log-format", "text"),
	"githubWebhookServer.secret.create": yamlAt("Secret", "arc-webhook", "Opaque", "type"),
	"githubWebhookServer.secret.name": {check: func(t *testing.T, objs []*unstructured.Unstructured) {
		require.Equal(t, yamlValue(t, "{secretKeyRef: {name: arc-webhook, key: github_webhook_secret_token}}"),
			env(t, container(t, objs, "arcflow-webhook"), "GITHUB_WEBHOOK_SECRET_TOKEN")["valueFrom"])
	}},
	"githubWebhookServer.secret.github_webhook_secret_token": yamlAt("Secret", "arc-webhook", "s3cret", "stringData", "github_webhook_secret_token"),
	"githubWebhookServer.imagePullSecrets":                   webhookPodAt("[{name: arcflow-cred}, {name: webhook-cred}]", "imagePullSecrets"),
	"githubWebhookServer.serviceAccount.annotations":         yamlAt("ServiceAccount", "arcflow-webhook", "arcflow-webhook", "metadata", "annotations", "iam.example.org/role"),
	"githubWebhookServer.podAnnotations":                     yamlAt("Deployment", "arcflow-webhook", "edge", "spec", "template", "metadata", "annotations", "example.org/owner"),
	"githubWebhookServer.podLabels":                          yamlAt("Deployment", "arcflow-webhook", "edge", "spec", "template", "metadata", "labels", "tier"),
	"githubWebhookServer.priorityClassName":                  webhookPodAt("high", "priorityClassName"),
	"githubWebhookServer.topologySpreadConstraints":          webhookPodAt("[{maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}]", "topologySpreadConstraints"),
	"githubWebhookServer.resources":                          yamlAt("Deployment", "arcflow-webhook", "70m", podSpec("containers", "0", "resources", "requests", "cpu")...),
	"githubWebhookServer.nodeSelector":                       webhookPodAt("{pool: edge}", "nodeSelector"),
	"githubWebhookServer.tolerations":                        webhookPodAt("[{key: edge, operator: Exists}]", "tolerations"),
	"githubWebhookServer.affinity":                           webhookPodAt("{podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {topologyKey: kubernetes.io/hostname}}]}}", "affinity"),
	"githubWebhookServer.terminationGracePeriodSeconds":      webhookPodAt("45", "terminationGracePeriodSeconds"),
	"githubWebhookServer.env": {check: func(t *testing.T, objs []*unstructured.Unstructured) {
		require.Equal(t, "100MiB", env(t, container(t, objs, "arcflow-webhook"), "GOMEMLIMIT")["value"])
	}},
	"githubWebhookServer.lifecycle":                        webhookContainerAt("{preStop: {exec: {command: [sleep, '5']}}}", "lifecycle"),
	"githubWebhookServer.service.type":                     yamlAt("Service", "arcflow-webhook", "LoadBalancer", "spec", "type"),
	"githubWebhookServer.service.annotations":              yamlAt("Service", "arcflow-webhook", "{example.org/lb: internet}", "metadata", "annotations"),
	"githubWebhookServer.service.loadBalancerSourceRanges": yamlAt("Service", "arcflow-webhook", "[192.30.252.0/22]", "spec", "loadBalancerSourceRanges"),
	"githubWebhookServer.ingress.enabled":                  yamlAt("Ingress", "arcflow-webhook", "arcflow-webhook", "metadata", "name"),
	"githubWebhookServer.ingress.ingressClassName":         yamlAt("Ingress", "arcflow-webhook", "nginx", "spec", "ingressClassName"),
	"githubWebhookServer.ingress.annotations":              yamlAt("Ingress", "arcflow-webhook", "letsencrypt", "metadata", "annotations", "cert-manager.io/cluster-issuer"),
	"githubWebhookServer.ingress.hosts":                    yamlAt("Ingress", "arcflow-webhook", "hooks.example.org", "spec", "rules", "0", "host"),
	"githubWebhookServer.ingress.tls":                      yamlAt("Ingress", "arcflow-webhook", "[{secretName: hooks-tls, hosts: [hooks.example.org]}]", "spec", "tls"),
	"githubWebhookServer.podDisruptionBudget.enabled":      absent("PodDisruptionBudget", "arcflow-webhook", "--set", "githubWebhookServer.podDisruptionBudget.enabled=false"),
	"githubWebhookServer.podDisruptionBudget.minAvailable": yamlAt("PodDisruptionBudget", "arcflow-webhook", "2", "spec", "minAvailable"),
	"githubWebhookServer.podDisruptionBudget.maxUnavailable": {own: []string{"--set", "githubWebhookServer.podDisruptionBudget.maxUnavailable=2"},
		check: yamlAt("PodDisruptionBudget", "arcflow-webhook", "2", "spec", "maxUnavailable").check},
}

func serviceMonitorEndpoint(field, want string) func(t *testing.T, objs []*unstructured.Unstructured) {
	return func(t *testing.T, objs []*unstructured.Unstructured) {
		endpoints := at(t, objs, "ServiceMonitor", "arcflow-worker", "spec", "endpoints").([]any)
		require.Equal(t, want, endpoints[0].(map[string]any)[field])
	}
}
