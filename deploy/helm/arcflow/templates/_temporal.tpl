{{- /* The bundled Temporal (temporal-bundled.yaml) runs when temporal.address
is empty. Its connection settings are for an external Temporal only: the dev
server serves plain gRPC inside the cluster. */ -}}
{{- define "arcflow.temporalBundled" -}}
{{- if not .Values.temporal.address -}}
{{- $t := .Values.temporal -}}
{{- if or $t.tls.enabled $t.tls.secretName $t.tls.serverName $t.tls.ca.secretName $t.tls.ca.configMapName $t.apiKeySecretName -}}
{{- fail "temporal.tls and temporal.apiKeySecretName connect to an external Temporal: set temporal.address too (the bundled Temporal serves plain gRPC inside the cluster)" -}}
{{- end -}}
true
{{- end -}}
{{- end -}}

{{- /* The frontend's port of the bundled Temporal, its Web UI's, and its
Prometheus metrics' (the server's own: persistence, requests, workflows). */ -}}
{{- define "arcflow.temporalFrontendPort" -}}7233{{- end -}}
{{- define "arcflow.temporalUIPort" -}}8233{{- end -}}
{{- define "arcflow.temporalMetricsPort" -}}9233{{- end -}}

{{- define "arcflow.temporalAddress" -}}
{{- if include "arcflow.temporalBundled" . -}}
{{ include "arcflow.fullname" . }}-temporal:{{ include "arcflow.temporalFrontendPort" . }}
{{- else -}}
{{ .Values.temporal.address }}
{{- end -}}
{{- end -}}

{{- define "arcflow.temporalNamespace" -}}
{{- if .Values.temporal.namespace -}}
{{ .Values.temporal.namespace }}
{{- else if include "arcflow.temporalBundled" . -}}
arcflow
{{- else -}}
default
{{- end -}}
{{- end -}}

{{- /* arcflow's custom search attributes and their types: what `arcflow setup`
registers (workflows/contract.SearchAttributeTypes; deploy/temporal_test.go
keeps the two equal). The bundled Temporal registers them at start. */ -}}
{{- define "arcflow.searchAttributes" -}}
ArcflowKind: Keyword
ArcflowPool: Keyword
ArcflowRunnerName: Keyword
ArcflowRunnerState: Keyword
ArcflowScope: Keyword
{{- end -}}
