{{/* Common labels of every object of the release. */}}
{{- define "sett.labels" -}}
app.kubernetes.io/name: sett
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
sett.dev/instance: {{ .Values.instance }}
{{- end }}

{{/*
Which Redis the release uses: "bundled", "url", "sentinel" or "cluster".
Fails unless exactly one is set, and on settings the bundled Redis cannot
honour.
*/}}
{{- define "sett.redisMode" -}}
{{- $r := .Values.redis -}}
{{- $set := list -}}
{{- $keys := list -}}
{{- if $r.bundled.enabled }}{{ $set = append $set "bundled" }}{{ $keys = append $keys "redis.bundled.enabled" }}{{ end -}}
{{- if $r.url }}{{ $set = append $set "url" }}{{ $keys = append $keys "redis.url" }}{{ end -}}
{{- if $r.sentinel.addresses }}{{ $set = append $set "sentinel" }}{{ $keys = append $keys "redis.sentinel.addresses" }}{{ end -}}
{{- if $r.cluster.addresses }}{{ $set = append $set "cluster" }}{{ $keys = append $keys "redis.cluster.addresses" }}{{ end -}}
{{- if eq (len $set) 0 -}}
{{- fail "no Redis configured: set redis.bundled.enabled=true for a Redis inside the release, or one of redis.url, redis.sentinel.addresses and redis.cluster.addresses for an external one" -}}
{{- else if gt (len $set) 1 -}}
{{- fail (printf "conflicting Redis settings: %s are all set; keep exactly one of redis.bundled.enabled, redis.url, redis.sentinel.addresses and redis.cluster.addresses" (join ", " $keys)) -}}
{{- end -}}
{{- if $r.bundled.enabled -}}
{{- if $r.tls.enabled }}{{ fail "redis.tls.enabled: the bundled Redis serves plaintext inside the cluster; for TLS use an external Redis (redis.url: rediss://...)" }}{{ end -}}
{{- if not $r.acl.enabled }}{{ fail "redis.acl.enabled=false: the bundled Redis always creates the ACL users; drop the setting" }}{{ end -}}
{{- end -}}
{{- first $set -}}
{{- end }}

{{/* Name of the bundled Redis's Service, StatefulSet and password Secret. */}}
{{- define "sett.bundledRedis" -}}
{{ .Release.Name }}-redis
{{- end }}

{{/* The Secret the components read their Redis passwords from. */}}
{{- define "sett.passwordSecret" -}}
{{- if hasKey .Values.redis "passwordSecret" -}}
{{- fail "redis.passwordSecret was renamed redis.existingSecret (same keys): rename the setting" -}}
{{- end -}}
{{- if .Values.redis.bundled.enabled -}}
{{ .Values.redis.bundled.existingSecret | default (include "sett.bundledRedis" .) }}
{{- else -}}
{{ required "redis.existingSecret is required: the Secret with the Redis passwords" .Values.redis.existingSecret }}
{{- end -}}
{{- end }}

{{/* The services.redis section of sett.yml, from .Values.redis. */}}
{{- define "sett.redisYml" -}}
{{- $mode := include "sett.redisMode" . -}}
services:
  redis:
{{- if eq $mode "bundled" }}
    url: {{ printf "redis://%s:6379/0" (include "sett.bundledRedis" .) | quote }}
{{- end }}
{{- with .Values.redis }}
{{- if eq $mode "url" }}
    url: {{ .url | quote }}
{{- else if eq $mode "sentinel" }}
    sentinel:
      master_name: {{ required "redis.sentinel.masterName is required with sentinel addresses" .sentinel.masterName | quote }}
      addresses: {{ toJson .sentinel.addresses }}
{{- else if eq $mode "cluster" }}
    cluster:
      addresses: {{ toJson .cluster.addresses }}
{{- end }}
    wait_replicas: {{ .waitReplicas | int }}
{{- if .tls.enabled }}
    tls:
      enabled: true
      ca_file: /etc/sett/tls/ca.crt
{{- if .tls.clientCertificate }}
      cert_file: /etc/sett/tls/tls.crt
      key_file: /etc/sett/tls/tls.key
{{- end }}
{{- if .tls.serverName }}
      server_name: {{ .tls.serverName | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* Redis credentials of one component: $ is the root, .user the ACL user. */}}
{{- define "sett.redisEnv" -}}
{{- $r := .root.Values.redis -}}
{{- $secret := include "sett.passwordSecret" .root -}}
{{- if or $r.acl.enabled $r.bundled.enabled }}
- name: SETT_REDIS_USERNAME
  value: {{ .user | quote }}
- name: SETT_REDIS_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ $secret }}, key: {{ .user | quote }}}}
{{- else }}
- name: SETT_REDIS_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ $secret }}, key: password}}
{{- end }}
{{- if $r.sentinel.addresses }}
- name: SETT_REDIS_SENTINEL_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ $secret }}, key: sentinel-password, optional: true}}
{{- end }}
{{- end }}

{{/* redis.conf of the bundled Redis. */}}
{{- define "sett.redisConf" -}}
port 6379
bind * -::*
dir /data
# AOF, fsynced every second: a crash loses at most about a second of
# writes (SPEC §4.2); RDB snapshots stay on for fast restarts.
appendonly yes
appendfsync everysec
# Sett's state must never be evicted: refuse writes when full instead.
maxmemory-policy noeviction
# The users (default: the administrator) with their password hashes.
aclfile /etc/redis/acl/users.acl
{{- end }}


{{/* An image reference with .Values.image.registry in front: $ is the
root, .image the image. */}}
{{- define "sett.image" -}}
{{- $reg := .root.Values.image.registry | default "" | trimSuffix "/" -}}
{{- if $reg -}}{{ $reg }}/{{ end -}}{{ .image }}
{{- end }}

{{/* Name of a component's ServiceAccount: $ the root, .component its name. */}}
{{- define "sett.serviceAccount" -}}
{{ .root.Release.Name }}-{{ .component }}
{{- end }}

{{/*
The pod-level settings every component shares: $ the root, .c the
component's values (nodeSelector, tolerations, affinity), .component the
ServiceAccount suffix, .podSecurityContext the pod securityContext.
*/}}
{{- define "sett.podSpec" -}}
{{- $v := .root.Values -}}
serviceAccountName: {{ if $v.serviceAccount.create }}{{ include "sett.serviceAccount" . }}{{ else }}default{{ end }}
automountServiceAccountToken: false
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .podSecurityContext | nindent 2 }}
{{- with (.c.nodeSelector | default $v.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (.c.tolerations | default $v.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (.c.affinity | default $v.affinity) }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Pod annotations of a component: $ the root, .c its values. */}}
{{- define "sett.podAnnotations" -}}
{{- with (.c.podAnnotations | default .root.Values.podAnnotations) }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Refuses settYml agents the chart cannot run: controller-mode agents
start Docker worker containers, which a pod cannot.
*/}}
{{- define "sett.checkSettYml" -}}
{{- $y := .Values.settYml | fromYaml -}}
{{- if hasKey $y "Error" }}{{ fail (printf "settYml is not valid YAML: %s" $y.Error) }}{{ end -}}
{{- if hasKey ($y.services | default dict) "redis" }}{{ fail "settYml sets services.redis: the chart generates it from .Values.redis; remove it" }}{{ end -}}
{{- range $name, $a := ($y.agents | default dict) -}}
{{- if eq (toString ($a.mode | default "")) "controller" -}}
{{- fail (printf "settYml agents.%s: mode controller is not supported on Kubernetes (its cub starts Docker worker containers); run the tool in the agent's own image instead" $name) -}}
{{- end -}}
{{- end -}}
{{- end }}
