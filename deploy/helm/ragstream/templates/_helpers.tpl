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
KEDA's Kafka scaler credentials, taken from the same Secrets and settings as the pods, as
{parameters: N, env: [...], secretTargetRef: [...]}: the user name from the indexer
container's environment (the ConfigMap), the password, the CA and the client certificate
and key from their Secrets (KEDA wants their content, not the mounted paths).
*/}}
{{- define "ragstream.kedaKafkaAuth" -}}
{{- $s := .Values.config.bus.kafka_security }}
{{- $k := .Values.kafka }}
{{- $secrets := .Values.secrets.bus.kafka_security }}
{{- $env := list }}
{{- $refs := list }}
{{- if has $s.protocol (list "SASL_PLAINTEXT" "SASL_SSL") }}
{{- if eq $s.sasl_mechanism "OAUTHBEARER" }}
{{- if not .Values.indexer.keda.authenticationRef }}
{{- fail "KEDA's Kafka scaler gets OAUTHBEARER tokens from a token endpoint, not a file: set indexer.keda.authenticationRef to a TriggerAuthentication of your own" }}
{{- end }}
{{- else }}
{{- $env = append $env (dict "parameter" "username" "name" "RAGSTREAM_BUS__KAFKA_SECURITY__SASL_USERNAME" "containerName" "indexer") }}
{{- $refs = append $refs (dict "parameter" "password" "name" $secrets.sasl_password.name "key" $secrets.sasl_password.key) }}
{{- end }}
{{- end }}
{{- if has $s.protocol (list "SSL" "SASL_SSL") }}
{{- if $k.caSecret.name }}
{{- $refs = append $refs (dict "parameter" "ca" "name" $k.caSecret.name "key" $k.caSecret.key) }}
{{- end }}
{{- with $k.clientCertSecret }}
{{- $refs = append $refs (dict "parameter" "cert" "name" . "key" "tls.crt") }}
{{- $refs = append $refs (dict "parameter" "key" "name" . "key" "tls.key") }}
{{- end }}
{{- with $secrets.key_password }}
{{- if .name }}
{{- $refs = append $refs (dict "parameter" "keyPassword" "name" .name "key" .key) }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml (dict "parameters" (add (len $env) (len $refs)) "env" $env "secretTargetRef" $refs) }}
{{- end }}

{{/* Mirrors bus.kafka_security's checks (config_kafka.py) on the chart's values. */}}
{{- define "ragstream.validateKafka" -}}
{{- $s := .Values.config.bus.kafka_security }}
{{- $k := .Values.kafka }}
{{- $tls := has $s.protocol (list "SSL" "SASL_SSL") }}
{{- $sasl := has $s.protocol (list "SASL_PLAINTEXT" "SASL_SSL") }}
{{- $password := .Values.secrets.bus.kafka_security.sasl_password.name }}
{{- if and (not $tls) (or $k.caSecret.name $k.clientCertSecret) }}
{{- fail (printf "kafka.caSecret and kafka.clientCertSecret need config.bus.kafka_security.protocol SSL or SASL_SSL, not %s" $s.protocol) }}
{{- end }}
{{- if and (not $sasl) $s.sasl_mechanism }}
{{- fail "config.bus.kafka_security.sasl_mechanism needs protocol SASL_PLAINTEXT or SASL_SSL" }}
{{- end }}
{{- if and $sasl (not $s.sasl_mechanism) }}
{{- fail (printf "config.bus.kafka_security.sasl_mechanism is required with protocol %s" $s.protocol) }}
{{- end }}
{{- if and $sasl (eq $s.sasl_mechanism "OAUTHBEARER") (not $k.oauthTokenSecret.name) }}
{{- fail "kafka.oauthTokenSecret.name is required with OAUTHBEARER: name the Secret holding the access token" }}
{{- end }}
{{- if and $sasl (ne $s.sasl_mechanism "OAUTHBEARER") (not (and $s.sasl_username $password)) }}
{{- fail (printf "%s needs config.bus.kafka_security.sasl_username and secrets.bus.kafka_security.sasl_password.name (an existing Secret holding the password)" $s.sasl_mechanism) }}
{{- end }}
{{- if and .Values.secrets.bus.kafka_security.key_password.name (not $k.clientCertSecret) }}
{{- fail "secrets.bus.kafka_security.key_password needs kafka.clientCertSecret" }}
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

{{/*
The files of bus.kafka_security, in the shape of ragstream.authVolumes; both components
mount them, as both talk to Kafka (the query service publishes and reads the progress).
*/}}
{{- define "ragstream.kafkaVolumes" -}}
{{- $k := .Values.kafka }}
{{- $volumes := list }}
{{- if $k.caSecret.name }}
{{- $source := dict "secret" (dict "secretName" $k.caSecret.name "defaultMode" 292 "items" (list (dict "key" $k.caSecret.key "path" "ca.crt"))) }}
{{- $volumes = append $volumes (dict "name" "kafka-ca" "dir" "/etc/ragstream/kafka/ca" "source" $source "files" (dict "ca_file" "ca.crt")) }}
{{- end }}
{{- with $k.clientCertSecret }}
{{- $items := list (dict "key" "tls.crt" "path" "tls.crt") (dict "key" "tls.key" "path" "tls.key") }}
{{- $source := dict "secret" (dict "secretName" . "defaultMode" 288 "items" $items) }}
{{- $volumes = append $volumes (dict "name" "kafka-client" "dir" "/etc/ragstream/kafka/client" "source" $source "files" (dict "cert_file" "tls.crt" "key_file" "tls.key")) }}
{{- end }}
{{- if $k.oauthTokenSecret.name }}
{{- $source := dict "secret" (dict "secretName" $k.oauthTokenSecret.name "defaultMode" 288 "items" (list (dict "key" $k.oauthTokenSecret.key "path" "token"))) }}
{{- $volumes = append $volumes (dict "name" "kafka-oauth" "dir" "/etc/ragstream/kafka/oauth" "source" $source "files" (dict "oauth_token_file" "token")) }}
{{- end }}
{{- toYaml (dict "volumes" $volumes) }}
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
{{- /* A nested section, e.g. bus.kafka_security. */}}
{{- range $inner, $innerRef := $ref }}
{{- include "ragstream.secretEnv" (dict "name" (printf "RAGSTREAM_%s__%s__%s" $section $field $inner) "ref" $innerRef) }}
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
"port" INT "healthPort" INT (0: the probes use "port") "authFiles" BOOL (mount the auth
settings' files).
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
