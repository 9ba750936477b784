{{/* vim: set filetype=mustache: */}}

{{- define "mirrorql.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The release name alone when it already names the chart, so that a subchart of
an umbrella release "mirror" is "mirror-mirrorql" and a release "mirrorql" is
"mirrorql".
*/}}
{{- define "mirrorql.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "mirrorql.labels" -}}
{{ include "mirrorql.selectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: hedera-mirror-node
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ include "mirrorql.chart" . }}
{{- if .Values.labels }}
{{ toYaml .Values.labels }}
{{- end }}
{{- end -}}

{{- define "mirrorql.name" -}}
{{- if .Values.global.useReleaseForNameLabel -}}
{{- .Release.Name -}}
{{- else -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "mirrorql.namespace" -}}
{{- default .Release.Namespace .Values.global.namespaceOverride -}}
{{- end -}}

{{- define "mirrorql.selectorLabels" -}}
app.kubernetes.io/component: mirrorql
app.kubernetes.io/name: {{ include "mirrorql.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "mirrorql.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "mirrorql.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The series of this release as Prometheus scrapes them through the
ServiceMonitor: its job is the Service's name, in the release's namespace.
*/}}
{{- define "mirrorql.metricSelector" -}}
job="{{ include "mirrorql.fullname" . }}",namespace="{{ include "mirrorql.namespace" . }}"
{{- end -}}

{{/*
The HTTP paths mirrorql answers, one regular expression per enabled route
under routes.*, as a YAML list. Each is anchored (^…$): Traefik's PathRegexp
searches the path with an expression, so an unanchored one would also claim
/foo/api/v1/schedules or /api/v1/accounts/0.0.2/graphql. The Node routes are
case-insensitive and take one trailing slash, as Express does; the topic
route is rest-java's own expression, anchored, which mirrorql's router
applies too. Beside a mirror node (docs.besideMirrorNode) /api/v1/docs* stays
with the mirror node's REST API: see mirrorql.docsRoute.
*/}}
{{- define "mirrorql.httpPaths" -}}
{{- $r := .Values.routes -}}
{{- if $r.topic }}
- '^/api/v1/topics/(\d+\.){0,2}\d+$'
{{- end }}
{{- if $r.topicMessages }}
- '^/(?i:api/v1/topics/[^/]+/messages(/[^/]+)?)/?$'
{{- end }}
{{- if $r.messageByTimestamp }}
- '^/(?i:api/v1/topics/messages/[^/]+)/?$'
{{- end }}
{{- if $r.schedules }}
- '^/(?i:api/v1/schedules(/[^/]+)?)/?$'
{{- end }}
{{- if $r.graphql }}
- '^/graphql$'
{{- end }}
{{- if $r.explorer }}
- '^/graphql/explorer/.+$'
{{- end }}
{{- if $r.dashboard }}
- '^/dashboard(/(assets/.+)?)?$'
{{- end }}
{{- if and $r.docs (not .Values.docs.besideMirrorNode) }}
- '^/api/v1/docs(/|/openapi\.yml|/assets/.+)?$'
{{- end }}
{{- end -}}

{{/*
Beside a mirror node, mirrorql's OpenAPI document at a path of its own
(docs.path), which the proxy rewrites to the service's /api/v1/docs/openapi.yml:
as a dict of path and target, empty when not wanted.
*/}}
{{- define "mirrorql.docsRoute" -}}
{{- if and .Values.routes.docs .Values.docs.besideMirrorNode .Values.docs.path -}}
path: {{ .Values.docs.path | quote }}
target: /api/v1/docs/openapi.yml
{{- end -}}
{{- end -}}

{{/* The gRPC methods mirrorql serves to the SDKs, as service/method. */}}
{{- define "mirrorql.grpcMethods" -}}
{{- if .Values.routes.consensus }}
- com.hedera.mirror.api.proto.ConsensusService/subscribeTopic
{{- end }}
{{- end -}}

{{/* Settings that carry credentials: they come from Secrets, never from values. */}}
{{- define "mirrorql.secretSettings" -}}
{{- list "DATABASE_URL" "DB_PASSWORD" "REDIS_URL" "LIVE_REDIS_URL" | toJson -}}
{{- end -}}

{{/* The database's settings, which the values under database set. */}}
{{- define "mirrorql.databaseSettings" -}}
{{- list "DB_HOST" "DB_PORT" "DB_NAME" "DB_USERNAME" "DB_PASSWORD_FILE" "DB_SSLMODE" "DB_TLS_CA" "DB_TLS_CERT" "DB_TLS_KEY" | toJson -}}
{{- end -}}

{{/*
The Gateway the HTTPRoutes and the GRPCRoute attach to: gateway.name, else
global.gateway.name, else the release's name, which is the umbrella chart's
Gateway when mirrorql is its subchart.
*/}}
{{- define "mirrorql.gatewayName" -}}
{{- tpl (.Values.gateway.name | default .Values.global.gateway.name | default .Release.Name) . -}}
{{- end -}}
