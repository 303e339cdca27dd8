{{/*
Object names are fixed: they are tollgate's flag defaults (--service-name,
--secret-name, --lease-name, --webhook-config-name) and RBAC grants access by
them. One release per cluster: the webhook configurations and ClusterRole
named tollgate are cluster-wide.
*/}}

{{/* Labels of every object: deploy/'s, and Helm's. */}}
{{- define "tollgate.labels" -}}
app.kubernetes.io/name: tollgate
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* The Pods' selector, as in deploy/: the name only. */}}
{{- define "tollgate.selector" -}}
app.kubernetes.io/name: tollgate
{{- end }}

{{/* The policies' ConfigMap, or none with policies.source=embedded. */}}
{{- define "tollgate.policiesConfigMap" -}}
{{- if eq .Values.policies.source "existingConfigMap" -}}
{{ required "policies.existingConfigMap is required with policies.source=existingConfigMap" .Values.policies.existingConfigMap }}
{{- else if ne .Values.policies.source "embedded" -}}
tollgate-policies
{{- end }}
{{- end }}
