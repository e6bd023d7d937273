{{- define "arcflow.fullname" -}}
{{- printf "%s" (default .Release.Name .Values.fullnameOverride) | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "arcflow.labels" -}}
app.kubernetes.io/name: arcflow
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "arcflow.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "arcflow.temporalEnv" -}}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
{{- if .Values.temporal.tls.enabled }}
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
{{- if .Values.temporal.apiKeySecretName }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef: {name: {{ .Values.temporal.apiKeySecretName }}, key: api-key}
{{- end }}
{{- end -}}

{{- define "arcflow.temporalVolumeMounts" -}}
{{- if and .Values.temporal.tls.enabled .Values.temporal.tls.secretName }}
volumeMounts:
  - name: temporal-tls
    mountPath: /etc/temporal-tls
    readOnly: true
{{- end }}
{{- end -}}

{{- define "arcflow.temporalVolumes" -}}
{{- if and .Values.temporal.tls.enabled .Values.temporal.tls.secretName }}
volumes:
  - name: temporal-tls
    secret:
      secretName: {{ .Values.temporal.tls.secretName }}
{{- end }}
{{- end -}}

{{- define "arcflow.watchNamespace" -}}
{{- if .Values.scope.singleNamespace -}}
{{ default .Release.Namespace .Values.scope.watchNamespace }}
{{- end -}}
{{- end -}}
