{{- define "arcflow.fullname" -}}
{{- printf "%s" (default .Release.Name .Values.fullnameOverride) | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "arcflow.labels" -}}
app.kubernetes.io/name: arcflow
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- /* ARC's `labels`: on every object, as ARC's chart puts them. */}}
{{- with .Values.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "arcflow.image" -}}
{{ include "arcflow.partImage" (list . "") }}
{{- end -}}

{{- define "arcflow.temporalEnv" -}}
- name: TEMPORAL_ADDRESS
  value: {{ include "arcflow.temporalAddress" . | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ include "arcflow.temporalNamespace" . | quote }}
{{- if include "arcflow.temporalTLS" . }}
- name: TEMPORAL_TLS
  value: "true"
{{- with .Values.temporal.tls.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if .Values.temporal.tls.secretName }}
- name: TEMPORAL_TLS_CLIENT_CERT_PATH
  value: /etc/temporal-tls/tls.crt
- name: TEMPORAL_TLS_CLIENT_KEY_PATH
  value: /etc/temporal-tls/tls.key
{{- end }}
{{- end }}
{{- if include "arcflow.temporalCA" . }}
- name: TEMPORAL_TLS_SERVER_CA_CERT_PATH
  value: /etc/temporal-ca/ca.crt
{{- end }}
{{- if .Values.temporal.apiKeySecretName }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef: {name: {{ .Values.temporal.apiKeySecretName }}, key: api-key}
{{- end }}
{{- end -}}

{{- /* The CA that signed Temporal's server certificate, from a Secret or a
ConfigMap. */ -}}
{{- define "arcflow.temporalCA" -}}
{{- $ca := .Values.temporal.tls.ca -}}
{{- if and $ca.secretName $ca.configMapName -}}
{{- fail "temporal.tls.ca: set secretName or configMapName, not both" -}}
{{- end -}}
{{- if or $ca.secretName $ca.configMapName -}}
{{- if not $ca.key -}}
{{- fail "temporal.tls.ca.key is empty: name the CA's key in the Secret or ConfigMap (ca.crt for cert-manager's)" -}}
{{- end -}}
true
{{- end -}}
{{- end -}}

{{- /* TLS to Temporal: on when tls.enabled asks for it, and when a value
needs it. A client certificate, a server name, a CA or an API key means
nothing over plain gRPC; the process itself turns TLS on for a certificate, a
CA or an API key but would drop a lone server name, and the chart would mount
no certificate without tls.enabled. So each implies TLS here, and the
environment, mounts and volumes below all follow this one decision
(values.yaml lists the combinations; deploy/temporaltls_test.go holds them). */ -}}
{{- define "arcflow.temporalTLS" -}}
{{- $t := .Values.temporal -}}
{{- if or $t.tls.enabled $t.tls.secretName $t.tls.serverName (include "arcflow.temporalCA" .) $t.apiKeySecretName -}}true{{- end -}}
{{- end -}}

{{- /* List items (no key) of the containers' volumeMounts and the pods'
volumes for Temporal's client certificate and CA, so a Deployment can add its
own beside them. */ -}}
{{- define "arcflow.temporalVolumeMounts" -}}
{{- if .Values.temporal.tls.secretName }}
- name: temporal-tls
  mountPath: /etc/temporal-tls
  readOnly: true
{{- end }}
{{- if include "arcflow.temporalCA" . }}
- name: temporal-ca
  mountPath: /etc/temporal-ca
  readOnly: true
{{- end }}
{{- end -}}

{{- define "arcflow.temporalVolumes" -}}
{{- if .Values.temporal.tls.secretName }}
- name: temporal-tls
  secret:
    secretName: {{ .Values.temporal.tls.secretName }}
{{- end }}
{{- $ca := .Values.temporal.tls.ca -}}
{{- /* Only the CA's key, as ca.crt: a cert-manager Secret also holds a key the
processes need not see. */ -}}
{{- with $ca.secretName }}
- name: temporal-ca
  secret:
    secretName: {{ . }}
    items: [{key: {{ $ca.key | quote }}, path: ca.crt}]
{{- end }}
{{- with $ca.configMapName }}
- name: temporal-ca
  configMap:
    name: {{ . }}
    items: [{key: {{ $ca.key | quote }}, path: ca.crt}]
{{- end }}
{{- end -}}

{{- define "arcflow.watchNamespace" -}}
{{- if .Values.scope.singleNamespace -}}
{{ default .Release.Namespace .Values.scope.watchNamespace }}
{{- end -}}
{{- end -}}

{{- /* The image of a part: its own tag when set (githubWebhookServer.image.tag,
for an upgrade that rolls the worker before the webhook), else the chart's. */ -}}
{{- define "arcflow.partImage" -}}
{{- $root := index . 0 -}}
{{- $tag := index . 1 | default $root.Values.image.tag | default $root.Chart.AppVersion -}}
{{ $root.Values.image.repository }}:{{ $tag }}
{{- end -}}

{{- /* Runner pods' image pull secrets (ARC's image.actionsRunnerImagePullSecrets),
names or {name: ...} entries, as --runner-image-pull-secret's comma list. */ -}}
{{- define "arcflow.runnerPullSecrets" -}}
{{- $names := list -}}
{{- range .Values.image.actionsRunnerImagePullSecrets -}}
{{- if kindIs "map" . -}}
{{- $names = append $names .name -}}
{{- else -}}
{{- $names = append $names . -}}
{{- end -}}
{{- end -}}
{{- join "," $names -}}
{{- end -}}
