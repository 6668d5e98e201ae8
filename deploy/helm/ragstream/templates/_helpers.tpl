{{/* Names, labels and the pod template shared by the query service and the indexer. */}}

{{- define "ragstream.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Room is left for the "-indexer" and "-headless" suffixes within 63 characters. */}}
{{- define "ragstream.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 45 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 45 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 45 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ragstream.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "ragstream.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ragstream
{{- end }}

{{/* Arguments: dict "root" $ "component" "query"|"indexer". */}}
{{- define "ragstream.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ragstream.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "ragstream.componentLabels" -}}
{{ include "ragstream.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "ragstream.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ragstream.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ragstream.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
One setting as an environment variable's text. Lists become JSON (what the settings loader
parses for list fields). YAML numbers arrive as floats: whole ones are printed as integers,
since 10000000 would otherwise print as 1e+07, which an integer setting rejects.
*/}}
{{- define "ragstream.envValue" -}}
{{- if kindIs "slice" . }}
{{- toJson . }}
{{- else if and (kindIs "float64" .) (eq . (floor .)) }}
{{- int64 . }}
{{- else }}
{{- . }}
{{- end }}
{{- end }}

{{/* Mirrors the settings' own cross-field checks, so a bad pair fails at install, not in a crash loop. */}}
{{- define "ragstream.validate" -}}
{{- $c := .Values.config }}
{{- if ge (int $c.chunking.overlap_tokens) (int $c.chunking.chunk_tokens) }}
{{- fail "config.chunking.overlap_tokens must be smaller than config.chunking.chunk_tokens" }}
{{- end }}
{{- if and (not (kindIs "invalid" $c.chunking.max_chunk_tokens)) (lt (int $c.chunking.max_chunk_tokens) (int $c.chunking.chunk_tokens)) }}
{{- fail "config.chunking.max_chunk_tokens must be at least config.chunking.chunk_tokens" }}
{{- end }}
{{- if and (not .Values.indexer.keda.enabled) (gt (int .Values.indexer.replicaCount) (int $c.bus.partitions)) }}
{{- fail (printf "indexer.replicaCount (%d) exceeds config.bus.partitions (%d): the extra consumers would sit idle" (int .Values.indexer.replicaCount) (int $c.bus.partitions)) }}
{{- end }}
{{- with .Values.query.autoscaling }}
{{- if and .enabled (gt (int .minReplicas) (int .maxReplicas)) }}
{{- fail (printf "query.autoscaling.minReplicas (%d) exceeds maxReplicas (%d)" (int .minReplicas) (int .maxReplicas)) }}
{{- end }}
{{- end }}
{{- if and .Values.otel.enabled (not .Values.otel.endpoint) }}
{{- fail "otel.endpoint is required when otel.enabled is true" }}
{{- end }}
{{- include "ragstream.validateKafka" . }}
{{- with .Values.auth }}
{{- if and .enabled (not .tokensSecret.name) }}
{{- fail "auth.tokensSecret.name is required when auth.enabled is true: name an existing Secret holding the tokens file (e.g. kubectl create secret generic ragstream-auth --from-file=tokens.toml), or set auth.enabled=false to serve without authentication. ragstream refuses to start with auth on and no tokens file." }}
{{- end }}
{{- if and .clientCA.name (not .tls.secretName) }}
{{- fail "auth.clientCA needs auth.tls.secretName: clients present certificates only over TLS (mTLS)" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The files of the auth settings, as {volumes: [...]}: each volume's name, mount directory,
source (a Secret or ConfigMap volume with only the needed keys) and files (setting -> file
name). The ConfigMap turns each file into RAGSTREAM_AUTH__<SETTING>; only the query pods
mount them, as only the query service reads them.
*/}}
{{- define "ragstream.authVolumes" -}}
{{- $auth := .Values.auth }}
{{- $volumes := list }}
{{- if $auth.enabled }}
{{- $key := $auth.tokensSecret.key }}
{{- /* The file keeps the key's name: its suffix (.json or not) tells the product how to parse it. */}}
{{- $source := dict "secret" (dict "secretName" $auth.tokensSecret.name "defaultMode" 288 "items" (list (dict "key" $key "path" $key))) }}
{{- $volumes = append $volumes (dict "name" "auth-tokens" "dir" "/etc/ragstream/auth" "source" $source "files" (dict "tokens_file" $key)) }}
{{- end }}
{{- with $auth.tls.secretName }}
{{- $items := list (dict "key" "tls.crt" "path" "tls.crt") (dict "key" "tls.key" "path" "tls.key") }}
{{- $source := dict "secret" (dict "secretName" . "defaultMode" 288 "items" $items) }}
{{- $volumes = append $volumes (dict "name" "auth-tls" "dir" "/etc/ragstream/tls" "source" $source "files" (dict "tls_cert" "tls.crt" "tls_key" "tls.key")) }}
{{- end }}
{{- with $auth.clientCA }}
{{- if .name }}
{{- $items := list (dict "key" .key "path" "ca.crt") }}
{{- $source := dict "configMap" (dict "name" .name "defaultMode" 292 "items" $items) }}
{{- if eq .kind "Secret" }}
{{- $source = dict "secret" (dict "secretName" .name "defaultMode" 292 "items" $items) }}
{{- end }}
{{- $volumes = append $volumes (dict "name" "auth-client-ca" "dir" "/etc/ragstream/client-ca" "source" $source "files" (dict "client_ca" "ca.crt")) }}
{{- end }}
{{- end }}
{{- toYaml (dict "volumes" $volumes) }}
{{- end }}

{{/* One setting from a Secret key (secretKeyRef); nothing for an empty name. Arguments: dict "name" SETTING_VARIABLE "ref" {name, key}. */}}
{{- define "ragstream.secretEnv" }}
{{- if .ref.name }}
- name: {{ .name | upper }}
  valueFrom:
    secretKeyRef:
      name: {{ .ref.name | quote }}
      key: {{ .ref.key | quote }}
{{- end }}
{{- end }}

{{/* Credentials (secretKeyRef), OpenTelemetry, then the component's extraEnv. Arguments: dict "root" $ "component" NAME "values" COMPONENT_VALUES. */}}
{{- define "ragstream.env" -}}
{{- $root := .root -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- range $section, $fields := $root.Values.secrets }}
{{- range $field, $ref := $fields }}
{{- if hasKey $ref "key" }}
{{- include "ragstream.secretEnv" (dict "name" (printf "RAGSTREAM_%s__%s" $section $field) "ref" $ref) }}
{{- else }}
{{- /* A nested section, e.g. bus.kafka_security; its SASL password is a mounted file (ragstream.kafkaVolumes). */}}
{{- range $inner, $innerRef := $ref }}
{{- if ne (printf "%s.%s.%s" $section $field $inner) "bus.kafka_security.sasl_password" }}
{{- include "ragstream.secretEnv" (dict "name" (printf "RAGSTREAM_%s__%s__%s" $section $field $inner) "ref" $innerRef) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
- name: OTEL_SERVICE_NAME
  value: {{ printf "%s-%s" (include "ragstream.fullname" $root) .component | quote }}
{{- $attributes := list "k8s.pod.name=$(POD_NAME)" "k8s.namespace.name=$(POD_NAMESPACE)" (printf "service.version=%s" $root.Chart.AppVersion) }}
{{- range $key, $value := $root.Values.otel.resourceAttributes }}
{{- $attributes = append $attributes (printf "%s=%s" $key $value) }}
{{- end }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ join "," $attributes | quote }}
{{- with $root.Values.otel }}
{{- if .enabled }}
- name: OTEL_TRACES_EXPORTER
  value: otlp
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: grpc
- name: OTEL_EXPORTER_OTLP_INSECURE
  value: {{ .insecure | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ .sampler | quote }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ .samplerArg | quote }}
{{- if .headers.name }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ .headers.name | quote }}
      key: {{ .headers.key | quote }}
{{- end }}
{{- else }}
- name: OTEL_SDK_DISABLED
  value: "true"
- name: OTEL_TRACES_EXPORTER
  value: none
{{- end }}
- name: OTEL_METRICS_EXPORTER
  value: none
- name: OTEL_LOGS_EXPORTER
  value: none
{{- end }}
{{- with .values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
A native gRPC probe on grpc.health.v1 (the empty service name: the whole server). The port
must speak plaintext (the kubelet's gRPC probe has no TLS): a query service under TLS is
probed on its plaintext health-only port (serve --health-listen).
*/}}
{{- define "ragstream.probe" -}}
grpc:
  port: {{ .port }}
  service: ""
periodSeconds: {{ .probe.periodSeconds }}
timeoutSeconds: {{ .probe.timeoutSeconds }}
failureThreshold: {{ .probe.failureThreshold }}
{{- end }}

{{/*
The pod template of both Deployments. Its security settings are fixed, not values: they meet
the Kubernetes "restricted" Pod Security Standard, and the image runs as uid 10001.
Arguments: dict "root" $ "component" NAME "values" COMPONENT_VALUES "args" LIST "portName" NAME
"port" INT "healthPort" INT (0: the probes use "port") "extraPorts" LIST of dict "name"
"port" (optional, not probed) "authFiles" BOOL (mount the auth settings' files).
*/}}
{{- define "ragstream.podTemplate" -}}
{{- $root := .root }}
{{- $v := .values }}
{{- $authVolumes := (include "ragstream.kafkaVolumes" $root | fromYaml).volumes }}
{{- if .authFiles }}
{{- $authVolumes = concat (include "ragstream.authVolumes" $root | fromYaml).volumes $authVolumes }}
{{- end -}}
metadata:
  labels:
    {{- include "ragstream.componentLabels" . | nindent 4 }}
    {{- with $root.Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
    {{- with $root.Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "ragstream.serviceAccountName" $root }}
  automountServiceAccountToken: false
  {{- with $root.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
  securityContext:
    runAsNonRoot: true
    runAsUser: 10001
    runAsGroup: 10001
    fsGroup: 10001
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: {{ .component }}
      image: {{ include "ragstream.image" $root | quote }}
      imagePullPolicy: {{ $root.Values.image.pullPolicy }}
      command: ["ragstream"]
      args:
        {{- toYaml .args | nindent 8 }}
      ports:
        - name: {{ .portName }}
          containerPort: {{ .port }}
          protocol: TCP
        {{- if .healthPort }}
        - name: health
          containerPort: {{ .healthPort }}
          protocol: TCP
        {{- end }}
        {{- range .extraPorts }}
        - name: {{ .name }}
          containerPort: {{ .port }}
          protocol: TCP
        {{- end }}
      envFrom:
        - configMapRef:
            name: {{ include "ragstream.fullname" $root }}
      env:
        {{- include "ragstream.env" . | nindent 8 }}
      {{- $probePort := .healthPort | default .port }}
      startupProbe:
        {{- include "ragstream.probe" (dict "port" $probePort "probe" $v.probes.startup) | nindent 8 }}
      livenessProbe:
        {{- include "ragstream.probe" (dict "port" $probePort "probe" $v.probes.liveness) | nindent 8 }}
      readinessProbe:
        {{- include "ragstream.probe" (dict "port" $probePort "probe" $v.probes.readiness) | nindent 8 }}
      resources:
        {{- toYaml $v.resources | nindent 8 }}
      securityContext:
        runAsNonRoot: true
        runAsUser: 10001
        runAsGroup: 10001
        allowPrivilegeEscalation: false
        privileged: false
        readOnlyRootFilesystem: true
        capabilities:
          drop: ["ALL"]
        seccompProfile:
          type: RuntimeDefault
      volumeMounts:
        - name: tmp
          mountPath: /tmp
        {{- range $authVolumes }}
        - name: {{ .name }}
          mountPath: {{ .dir }}
          readOnly: true
        {{- end }}
  volumes:
    - name: tmp
      emptyDir:
        sizeLimit: {{ $v.tmpSizeLimit }}
    {{- range $authVolumes }}
    - name: {{ .name }}
      {{- toYaml .source | nindent 6 }}
    {{- end }}
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
