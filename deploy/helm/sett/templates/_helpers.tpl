{{/* Common labels of every object of the release. */}}
{{- define "sett.labels" -}}
app.kubernetes.io/name: sett
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
sett.dev/instance: {{ .Values.instance }}
{{- end }}

{{/* The services.redis section of sett.yml, from .Values.redis. */}}
{{- define "sett.redisYml" -}}
services:
  redis:
{{- with .Values.redis }}
{{- if .url }}
    url: {{ .url | quote }}
{{- else if .sentinel.addresses }}
    sentinel:
      master_name: {{ required "redis.sentinel.masterName is required with sentinel addresses" .sentinel.masterName | quote }}
      addresses: {{ toJson .sentinel.addresses }}
{{- else if .cluster.addresses }}
    cluster:
      addresses: {{ toJson .cluster.addresses }}
{{- else }}
{{- fail "set redis.url, redis.sentinel.addresses or redis.cluster.addresses: the chart uses an external Redis" }}
{{- end }}
    wait_replicas: {{ .waitReplicas | int }}
{{- if .tls.enabled }}
    tls:
      enabled: true
      ca_file: /etc/sett/tls/ca.crt
{{- if .tls.serverName }}
      server_name: {{ .tls.serverName | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* Redis credentials of one component: $ is the root, .user the ACL user. */}}
{{- define "sett.redisEnv" -}}
{{- $r := .root.Values.redis -}}
{{- if $r.acl.enabled }}
- name: SETT_REDIS_USERNAME
  value: {{ .user | quote }}
- name: SETT_REDIS_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ $r.passwordSecret }}, key: {{ .user | quote }}}}
{{- else }}
- name: SETT_REDIS_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ $r.passwordSecret }}, key: password}}
{{- end }}
{{- if $r.sentinel.addresses }}
- name: SETT_REDIS_SENTINEL_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ $r.passwordSecret }}, key: sentinel-password, optional: true}}
{{- end }}
{{- end }}
