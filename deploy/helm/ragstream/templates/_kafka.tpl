{{/* The Kafka parts of the chart: bus.kafka_security's files, its checks, and KEDA's credentials. */}}

{{/*
The files of bus.kafka_security, in the shape of ragstream.authVolumes; both components
mount them, as both talk to Kafka (the query service publishes and reads the progress).
The SASL password is one of them (sasl_password_file), not an environment variable: the
kubelet updates a mounted Secret in place, and the pods reconnect with a rotated password
without a restart. The mounts are whole directories (no subPath), which the kubelet updates.
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
{{- with $.Values.secrets.bus.kafka_security.sasl_password }}
{{- if .name }}
{{- $source := dict "secret" (dict "secretName" .name "defaultMode" 288 "items" (list (dict "key" .key "path" "password"))) }}
{{- $volumes = append $volumes (dict "name" "kafka-sasl" "dir" "/etc/ragstream/kafka/sasl" "source" $source "files" (dict "sasl_password_file" "password")) }}
{{- end }}
{{- end }}
{{- if $k.oauthTokenSecret.name }}
{{- $source := dict "secret" (dict "secretName" $k.oauthTokenSecret.name "defaultMode" 288 "items" (list (dict "key" $k.oauthTokenSecret.key "path" "token"))) }}
{{- $volumes = append $volumes (dict "name" "kafka-oauth" "dir" "/etc/ragstream/kafka/oauth" "source" $source "files" (dict "oauth_token_file" "token")) }}
{{- end }}
{{- toYaml (dict "volumes" $volumes) }}
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
