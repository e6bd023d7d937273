{{- /* ARC's chart values (chart actions-runner-controller 0.23.7, ARC
v0.27.6) beside arcflow's. A value that means the same in arcflow is read as
ARC's chart reads it, and one that would run something other than what its
user asked for is refused here, at render, with the arcflow value to use:
an ARC values file then either works or says what to change, never half of
it silently. docs/migrating-from-arc.md ("ARC's chart values beside
arcflow's") lists every ARC value and what becomes of it; deploy/arcvalues_test.go
renders each. ARC values that only ARC's users set (podAnnotations, env,
leaderElectionId, ...) are read without a default in values.yaml, as ARC's
chart reads its commented-out ones. */ -}}

{{- define "arcflow.arcRefusals" -}}
{{- $v := .Values -}}
{{- /* ARC's controller image cannot run `arcflow worker`: the pods would
crash-loop, and the runner image the user meant would be nowhere. */ -}}
{{- if regexMatch "actions-runner-controller(:[\\w.-]+)?$" (toString $v.image.repository) -}}
{{- fail (printf "image.repository is ARC's controller image (%s); arcflow's image is image.repository=ghcr.io/arcflow/arcflow; put the runner image in image.actionsRunnerRepositoryAndTag" $v.image.repository) -}}
{{- end -}}
{{- /* ARC's names for what arcflow names per part (the worker is ARC's
controller-manager): reading both would leave one of them ignored. Empty
values (ARC's defaults) change nothing and pass. */ -}}
{{- $renamed := list
  (list "replicaCount" $v.replicaCount "worker.replicaCount (the webhook's: githubWebhookServer.replicaCount)")
  (list "resources" $v.resources "worker.resources")
  (list "nodeSelector" $v.nodeSelector "worker.nodeSelector")
  (list "tolerations" $v.tolerations "worker.tolerations")
  (list "affinity" $v.affinity "worker.affinity")
  (list "podDisruptionBudget" $v.podDisruptionBudget "worker.podDisruptionBudget (arcflow's is on by default)")
  (list "metrics.serviceMonitor.enable" $v.metrics.serviceMonitor.enable "metrics.serviceMonitor.enabled")
  (list "metrics.serviceMonitorLabels" $v.metrics.serviceMonitorLabels "metrics.serviceMonitor.labels")
  (list "githubWebhookServer.service.ports" $v.githubWebhookServer.service.ports "githubWebhookServer.service.port (one port, to the webhook's http port)")
-}}
{{- range $renamed -}}
{{- if index . 1 -}}
{{- fail (printf "%s is ARC's value; arcflow's is %s" (index . 0) (index . 2)) -}}
{{- end -}}
{{- end -}}
{{- /* ServiceAccounts: arcflow binds its roles to <fullname>-worker and
<fullname>-webhook; another name would run the pods without those rights. */ -}}
{{- $sa := list $v.serviceAccount.name (dig "serviceAccount" "name" "" $v.githubWebhookServer) -}}
{{- if or (index $sa 0) (index $sa 1) -}}
{{- fail (printf "serviceAccount.name and githubWebhookServer.serviceAccount.name are ARC's; arcflow binds its roles to its own ServiceAccounts, %s-worker and %s-webhook (with serviceAccount.create=false, create those two)" (include "arcflow.fullname" .) (include "arcflow.fullname" .)) -}}
{{- end -}}
{{- /* What arcflow does not have: ignoring these would run without them. */ -}}
{{- if or $v.authSecret.github_basicauth_username $v.authSecret.github_basicauth_password -}}
{{- fail "authSecret.github_basicauth_username/password: arcflow has no basic authentication to a GitHub API proxy; authenticate with authSecret.github_token or a GitHub App (authSecret.github_app_*)" -}}
{{- end -}}
{{- if $v.githubWebhookServer.useRunnerGroupsVisibility -}}
{{- fail "githubWebhookServer.useRunnerGroupsVisibility: arcflow's webhook makes no GitHub calls and counts every runner group visible to every repository, as ARC's webhook server does without credentials; remove the value (docs/migrating-from-arc.md)" -}}
{{- end -}}
{{- with $v.actionsMetricsServer -}}
{{- if .enabled -}}
{{- fail "actionsMetricsServer.enabled: arcflow has no actions-metrics-server; arcflow's webhook server exports the job metrics (arcflow_job_startup_duration_seconds, docs/operations.md): point that GitHub webhook at githubWebhookServer and remove actionsMetricsServer" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* The runner image: ARC's image.actionsRunnerRepositoryAndTag, or
arcflow's earlier runner.image; one value, so both set differently is refused. */ -}}
{{- define "arcflow.runnerImage" -}}
{{- $arc := .Values.image.actionsRunnerRepositoryAndTag -}}
{{- $own := .Values.runner.image -}}
{{- if and $arc $own (ne $arc $own) -}}
{{- fail (printf "image.actionsRunnerRepositoryAndTag (%s) and runner.image (%s) both name the runner image: set one" $arc $own) -}}
{{- end -}}
{{- $arc | default $own -}}
{{- end -}}

{{- /* The worker's Lease (ARC's leaderElectionId): never ARC's own Lease,
which the worker's ARC guard reads (arcController.lease). Holding it, the
worker would wait for itself to stop. */ -}}
{{- define "arcflow.leaderElectionID" -}}
{{- with .Values.leaderElectionId -}}
{{- if eq (printf "%s/%s" $.Release.Namespace .) $.Values.arcController.lease -}}
{{- fail (printf "leaderElectionId=%s in namespace %s is ARC's own Lease (arcController.lease): the worker would hold it and wait for ARC to stop; give arcflow another leaderElectionId, or none (its Lease is then arcflow)" . $.Release.Namespace) -}}
{{- end -}}
{{- . -}}
{{- end -}}
{{- end -}}

{{- /* A part's extra environment in ARC's two forms: a list of EnvVars, or a
map of names to values. */ -}}
{{- define "arcflow.arcEnv" -}}
{{- if kindIs "slice" . -}}
{{ toYaml . }}
{{- else -}}
{{- range $key, $val := . }}
- name: {{ $key }}
  value: {{ $val | quote }}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* A pod template's metadata: the chart's labels, the part's, and ARC's
podLabels and podAnnotations. Called with (list $ component podLabels podAnnotations). */ -}}
{{- define "arcflow.podMetadata" -}}
{{- $root := index . 0 -}}
labels: {{- include "arcflow.labels" $root | nindent 2 }}
  app.kubernetes.io/component: {{ index . 1 }}
  {{- with index . 2 }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with index . 3 }}
annotations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
