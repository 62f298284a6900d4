{{/* Names, cut to 63 characters as Kubernetes names and label values must be. */}}
{{- define "tessera.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "tessera.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* One role's object name: <fullname>-<role>[-<suffix>]. Call with (list $ "issuer" "admin"). */}}
{{- define "tessera.roleName" -}}
{{- $root := index . 0 }}
{{- $parts := list (include "tessera.fullname" $root) (index . 1) }}
{{- if gt (len .) 2 }}{{ $parts = append $parts (index . 2) }}{{ end }}
{{- join "-" $parts | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "tessera.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "tessera.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{/* Labels of every object of a role. Call with (list $ "issuer"). */}}
{{- define "tessera.labels" -}}
{{ include "tessera.selectorLabels" . }}
app.kubernetes.io/part-of: tessera
app.kubernetes.io/version: {{ (index . 0).Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ (index . 0).Release.Service }}
helm.sh/chart: {{ printf "%s-%s" (index . 0).Chart.Name (index . 0).Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "tessera.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Where each volume goes. The data folder is a folder inside the volume, not its root: the
volume's root belongs to root, and Tessera makes its data folder 0700, which only the owner may do. */}}
{{- define "tessera.volumeRoot" -}}/var/lib/tessera{{- end }}
{{- define "tessera.dataDir" -}}/var/lib/tessera/data{{- end }}
{{- define "tessera.tlsDir" -}}/etc/tessera/tls{{- end }}
{{- define "tessera.hashingKeyDir" -}}/etc/tessera/secret-hashing{{- end }}
{{- define "tessera.kafkaTlsDir" -}}/etc/tessera/kafka-tls{{- end }}
{{- define "tessera.kafkaSaslDir" -}}/etc/tessera/kafka-sasl{{- end }}
{{- define "tessera.adminBootstrapDir" -}}/etc/tessera/admin-bootstrap{{- end }}

{{/* The Secrets' names: the operator's own, or the one this chart makes from a value. */}}
{{- define "tessera.hashingKeySecret" -}}
{{- default (include "tessera.roleName" (list . "secret-hashing-key")) .Values.secretHashingKey.existingSecret }}
{{- end }}
{{- define "tessera.peerSecretName" -}}
{{- default (include "tessera.roleName" (list . "peer-secret")) .Values.peerSecret.existingSecret }}
{{- end }}
{{- define "tessera.tlsSecret" -}}
{{- default (include "tessera.roleName" (list . "tls")) .Values.tls.existingSecret }}
{{- end }}
{{- define "tessera.tlsConfigured" -}}
{{- if or .Values.tls.existingSecret (and .Values.tls.cert .Values.tls.key) }}true{{ end }}
{{- end }}

{{/* TESSERA_MIRRORED_REGIONS as Tessera computes its default: the named list, else the peers. */}}
{{- define "tessera.mirroredRegions" -}}
{{- if .Values.regions.mirrored }}{{ .Values.regions.mirrored }}{{ else }}{{ keys .Values.regions.peers | sortAlpha | join "," }}{{ end }}
{{- end }}

{{- define "tessera.kafkaFedVerifier" -}}
{{- if eq .Values.verifier.source "kafka" }}true{{ end }}
{{- end }}

{{/*
The Service and port an Ingress or HTTPRoute leads to, as YAML: always a role's PUBLIC listener.
Call with (list $ "ingress" .Values.ingress). The values schema already refuses another port; this
says why, should the schema be skipped (helm --skip-schema-validation).
*/}}
{{- define "tessera.publicBackend" -}}
{{- $root := index . 0 }}
{{- $name := index . 1 }}
{{- $route := index . 2 }}
{{- if not (has $route.service (list "issuer" "verifier")) }}
{{- fail (printf "%s.service must be issuer or verifier (the relay serves nothing public)" $name) }}
{{- end }}
{{- if not (index $root.Values $route.service).enabled }}
{{- fail (printf "%s.service: %s.enabled is false, so there is no %s Service to route to" $name $route.service $route.service) }}
{{- end }}
{{- if eq $route.port "https" }}
service: {{ include "tessera.roleName" (list $root $route.service) }}
port: https
portNumber: {{ $root.Values.ports.public }}
{{- else if and (eq $route.port "legacy") (eq $route.service "issuer") $root.Values.issuer.legacyPort }}
service: {{ include "tessera.roleName" (list $root "issuer") }}
port: legacy
portNumber: {{ $root.Values.issuer.legacyPort }}
{{- else if eq $route.port "legacy" }}
{{- fail (printf "%s.port legacy needs service issuer and issuer.legacyPort" $name) }}
{{- else }}
{{- fail (printf "%s.port must be https or legacy: the admin listener is never routed from outside" $name) }}
{{- end }}
{{- end }}

{{/*
Refuses values that would give a cluster processes that cannot start or that disagree, with a
message naming the value, rather than pods that crash later.
*/}}
{{- define "tessera.validate" -}}
{{- if hasPrefix "sqlite:" .Values.eventStore.url }}
{{- fail "eventStore.url: the roles run in separate pods and cannot share a SQLite file; use EventStoreDB (esdb://…)" }}
{{- end }}
{{- if and (not .Values.eventStore.url) (not .Values.eventStore.existingSecret) (or .Values.issuer.enabled .Values.relay.enabled (not (include "tessera.kafkaFedVerifier" .))) }}
{{- fail "eventStore: set url or existingSecret; without one each pod would keep an embedded log of its own" }}
{{- end }}
{{- if not (has .Values.verifier.source (list "log" "kafka")) }}
{{- fail "verifier.source must be log or kafka" }}
{{- end }}
{{- if and .Values.relay.enabled (not .Values.kafka.brokers) }}
{{- fail "relay.enabled needs kafka.brokers: the relay publishes to Kafka" }}
{{- end }}
{{- if and .Values.verifier.enabled (include "tessera.kafkaFedVerifier" .) (not .Values.kafka.brokers) }}
{{- fail "verifier.source=kafka needs kafka.brokers" }}
{{- end }}
{{- if and .Values.verifier.enabled (include "tessera.kafkaFedVerifier" .) (not .Values.issuer.enabled) (not .Values.verifier.issuerJwksUrl) }}
{{- fail "verifier.source=kafka without an issuer in this release needs verifier.issuerJwksUrl" }}
{{- end }}
{{- if and .Values.issuer.enabled (not .Values.secretHashingKey.existingSecret) (not .Values.secretHashingKey.value) }}
{{- fail "secretHashingKey: name the Secret you created (existingSecret) or give the key with --set-file secretHashingKey.value=FILE; each issuer would otherwise make a key of its own" }}
{{- end }}
{{- if and .Values.regions.peers (not .Values.regions.name) }}
{{- fail "regions.peers needs regions.name (TESSERA_REGION)" }}
{{- end }}
{{- if and .Values.regions.peers (not .Values.peerSecret.existingSecret) (not .Values.peerSecret.value) }}
{{- fail "regions.peers needs the peer secret: peerSecret.existingSecret, or --set-file peerSecret.value=FILE" }}
{{- end }}
{{- if and (include "tessera.mirroredRegions" .) (ne (include "tessera.mirroredRegions" .) "none") (not .Values.kafka.brokers) }}
{{- fail "regions: following mirrored regions needs kafka.brokers (the mirrored topics are in this region's Kafka)" }}
{{- end }}
{{- if and .Values.regions.bareFamilyRegion (not .Values.regions.name) }}
{{- fail "regions.bareFamilyRegion needs regions.name" }}
{{- end }}
{{- if or (and .Values.tls.cert (not .Values.tls.key)) (and .Values.tls.key (not .Values.tls.cert)) }}
{{- fail "tls.cert and tls.key go together" }}
{{- end }}
{{- if and .Values.tls.caKey (not .Values.tls.existingSecret) }}
{{- fail "tls.caKey names an entry of tls.existingSecret" }}
{{- end }}
{{- if and .Values.kafka.sasl.mechanism (not .Values.kafka.sasl.existingSecret) }}
{{- fail "kafka.sasl.mechanism needs kafka.sasl.existingSecret (the password file)" }}
{{- end }}
{{- if not .Values.publicUrl }}
{{- fail "publicUrl: set the https URL clients reach Tessera at (TESSERA_PUBLIC_URL, e.g. --set publicUrl=https://auth.example.com); the OAuth 2.0 and Shared Signals metadata name every endpoint under it" }}
{{- end }}
{{- if not (hasPrefix "https://" .Values.publicUrl) }}
{{- fail "publicUrl must be an https URL (TESSERA_PUBLIC_URL)" }}
{{- end }}
{{- if eq (toString .Values.ports.public) (toString .Values.ports.admin) }}
{{- fail "ports.admin must differ from ports.public: the admin listener is private, the public one is not" }}
{{- end }}
{{- if and .Values.issuer.legacyPort (has (toString .Values.issuer.legacyPort) (list (toString .Values.ports.public) (toString .Values.ports.admin))) }}
{{- fail "issuer.legacyPort must differ from ports.public and ports.admin" }}
{{- end }}
{{- if and .Values.verifier.autoscaling.enabled (gt (int .Values.verifier.autoscaling.minReplicas) (int .Values.verifier.autoscaling.maxReplicas)) }}
{{- fail "verifier.autoscaling.minReplicas must not exceed verifier.autoscaling.maxReplicas" }}
{{- end }}
{{- if and .Values.admin.bootstrapToken.existingSecret (not .Values.issuer.enabled) }}
{{- fail "admin.bootstrapToken: the issuers register it, and issuer.enabled is false" }}
{{- end }}
{{- range $key, $_ := .Values.config }}
{{- if eq $key "TESSERA_PEER_SECRET" }}
{{- fail "config.TESSERA_PEER_SECRET: a secret does not go in a ConfigMap; use peerSecret" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The TESSERA_* settings of one role, as a YAML map for its ConfigMap. Call with (list $ "issuer").
What the chart sets comes last, so a stray key in `config` cannot move a listener or the data folder
away from where the probes, Services and volumes expect it.
*/}}
{{- define "tessera.roleConfig" -}}
{{- $root := index . 0 }}
{{- $role := index . 1 }}
{{- $v := $root.Values }}
{{- $roleValues := index $v $role }}
{{- $c := dict }}
{{- range $key, $value := $v.config }}{{ $_ := set $c $key (toString $value) }}{{ end }}
{{- range $key, $value := $roleValues.config }}{{ $_ := set $c $key (toString $value) }}{{ end }}
{{- $_ := set $c "TESSERA_HOST" "0.0.0.0" }}
{{- $_ := set $c "TESSERA_PORT" (toString $v.ports.public) }}
{{- $_ := set $c "TESSERA_ADMIN_HOST" "0.0.0.0" }}
{{- $_ := set $c "TESSERA_ADMIN_PORT" (toString $v.ports.admin) }}
{{- $_ := set $c "TESSERA_DATA_DIR" (include "tessera.dataDir" $root) }}
{{- $_ := set $c "TESSERA_PUBLIC_URL" $v.publicUrl }}
{{- $kafkaFed := and (eq $role "verifier") (include "tessera.kafkaFedVerifier" $root) }}
{{- if and $v.eventStore.url (not $v.eventStore.existingSecret) (not $kafkaFed) }}
{{- $_ := set $c "TESSERA_EVENT_STORE" $v.eventStore.url }}
{{- end }}
{{- if $v.kafka.brokers }}
{{- $_ := set $c "TESSERA_KAFKA_BROKERS" $v.kafka.brokers }}
{{- if $v.kafka.topic }}{{ $_ := set $c "TESSERA_KAFKA_TOPIC" $v.kafka.topic }}{{ end }}
{{- if $v.kafka.accountTopic }}{{ $_ := set $c "TESSERA_KAFKA_ACCOUNT_TOPIC" $v.kafka.accountTopic }}{{ end }}
{{- if $v.kafka.tls.enabled }}
{{- $_ := set $c "TESSERA_KAFKA_TLS" "true" }}
{{- if $v.kafka.tls.existingSecret }}
{{- if $v.kafka.tls.caKey }}{{ $_ := set $c "TESSERA_KAFKA_TLS_CA_FILE" (printf "%s/%s" (include "tessera.kafkaTlsDir" $root) $v.kafka.tls.caKey) }}{{ end }}
{{- if $v.kafka.tls.certKey }}{{ $_ := set $c "TESSERA_KAFKA_TLS_CERT_FILE" (printf "%s/%s" (include "tessera.kafkaTlsDir" $root) $v.kafka.tls.certKey) }}{{ end }}
{{- if $v.kafka.tls.keyKey }}{{ $_ := set $c "TESSERA_KAFKA_TLS_KEY_FILE" (printf "%s/%s" (include "tessera.kafkaTlsDir" $root) $v.kafka.tls.keyKey) }}{{ end }}
{{- end }}
{{- end }}
{{- if $v.kafka.sasl.mechanism }}
{{- $_ := set $c "TESSERA_KAFKA_SASL_MECHANISM" $v.kafka.sasl.mechanism }}
{{- if $v.kafka.sasl.username }}{{ $_ := set $c "TESSERA_KAFKA_SASL_USERNAME" $v.kafka.sasl.username }}{{ end }}
{{- $_ := set $c "TESSERA_KAFKA_SASL_PASSWORD_FILE" (printf "%s/%s" (include "tessera.kafkaSaslDir" $root) $v.kafka.sasl.existingSecretKey) }}
{{- end }}
{{- end }}
{{- if include "tessera.tlsConfigured" $root }}
{{- $_ := set $c "TESSERA_TLS_CERT" (printf "%s/tls.crt" (include "tessera.tlsDir" $root)) }}
{{- $_ := set $c "TESSERA_TLS_KEY" (printf "%s/tls.key" (include "tessera.tlsDir" $root)) }}
{{- end }}
{{- if $v.regions.name }}
{{- $_ := set $c "TESSERA_REGION" $v.regions.name }}
{{- end }}
{{- $mirrored := include "tessera.mirroredRegions" $root }}
{{- if and $mirrored $v.kafka.brokers (ne $role "relay") }}
{{- $_ := set $c "TESSERA_MIRRORED_REGIONS" $mirrored }}
{{- end }}
{{- if eq $role "issuer" }}
{{- if $v.regions.peers }}
{{- $peers := list }}
{{- range $name, $url := $v.regions.peers }}{{ $peers = append $peers (printf "%s=%s" $name $url) }}{{ end }}
{{- $_ := set $c "TESSERA_PEER_REGIONS" (join "," $peers) }}
{{- end }}
{{- if $v.regions.bareFamilyRegion }}{{ $_ := set $c "TESSERA_BARE_FAMILY_REGION" $v.regions.bareFamilyRegion }}{{ end }}
{{- if $v.issuer.legacyPort }}{{ $_ := set $c "TESSERA_LEGACY_PORT" (toString $v.issuer.legacyPort) }}{{ end }}
{{- end }}
{{- with $v.tracing }}
{{- if .otlpEndpoint }}{{ $_ := set $c "OTEL_EXPORTER_OTLP_ENDPOINT" .otlpEndpoint }}{{ end }}
{{- if .protocol }}{{ $_ := set $c "OTEL_EXPORTER_OTLP_PROTOCOL" .protocol }}{{ end }}
{{- if .sampler }}{{ $_ := set $c "OTEL_TRACES_SAMPLER" .sampler }}{{ end }}
{{- if .samplerArg }}{{ $_ := set $c "OTEL_TRACES_SAMPLER_ARG" (toString .samplerArg) }}{{ end }}
{{- end }}
{{- if eq $role "issuer" }}
{{- /* The transmitter, the audit queries and the bootstrap token are the issuer's. */}}
{{- range $key, $variable := dict "pauseAfter" "TESSERA_SSF_PAUSE_AFTER" "pushTimeout" "TESSERA_SSF_PUSH_TIMEOUT" "maxStreamsPerReceiver" "TESSERA_SSF_MAX_STREAMS_PER_RECEIVER" "minVerificationInterval" "TESSERA_SSF_MIN_VERIFICATION_INTERVAL" "pollWait" "TESSERA_SSF_POLL_WAIT" "leaseTtl" "TESSERA_SSF_LEASE_TTL" }}
{{- $value := index $v.ssf $key }}
{{- if or $value (eq (toString $value) "0") }}{{ $_ := set $c $variable (toString $value) }}{{ end }}
{{- end }}
{{- if $v.admin.auditQueryBudgetMs }}{{ $_ := set $c "TESSERA_AUDIT_QUERY_BUDGET_MS" (toString $v.admin.auditQueryBudgetMs) }}{{ end }}
{{- if $v.admin.bootstrapToken.existingSecret }}
{{- $_ := set $c "TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE" (printf "%s/token" (include "tessera.adminBootstrapDir" $root)) }}
{{- if $v.admin.bootstrapToken.scopes }}{{ $_ := set $c "TESSERA_ADMIN_BOOTSTRAP_SCOPES" (join "," $v.admin.bootstrapToken.scopes) }}{{ end }}
{{- end }}
{{- end }}
{{- if eq $role "verifier" }}
{{- $_ := set $c "TESSERA_VERIFIER_SOURCE" $v.verifier.source }}
{{- if $kafkaFed }}
{{- $jwks := $v.verifier.issuerJwksUrl | default (printf "https://%s:%v/.well-known/jwks.json" (include "tessera.roleName" (list $root "issuer")) $v.ports.public) }}
{{- $_ := set $c "TESSERA_ISSUER_JWKS_URL" $jwks }}
{{- end }}
{{- end }}
{{- toYaml $c }}
{{- end }}

{{/*
The init container that readies the data folder inside the volume: 0700 and the service user's,
as Tessera wants it. On an issuer it also copies the deployment's secret-hashing key into
<data folder>/keys/secret-hashing.key (0600 in a 0700 folder: what Tessera writes and reads,
packages/tokens/src/key-folder.ts). A different key already on the volume stops the pod instead of
being overwritten: credentials hashed with it would stop verifying, and the volume's copy may be
the only one left.
*/}}
{{- define "tessera.prepareDataFolder" -}}
set -eu
umask 077
data="$TESSERA_DATA_DIR"
mkdir -p "$data"
chmod 0700 "$data"
source="{{ include "tessera.hashingKeyDir" . }}/secret-hashing.key"
[ -e "$source" ] || exit 0
if ! grep -Eq '^[A-Za-z0-9_-]+$' "$source"; then
  echo "secret-hashing.key in the Secret is not one line of base64url, as Tessera writes it" >&2
  exit 1
fi
mkdir -p "$data/keys"
chmod 0700 "$data/keys"
target="$data/keys/secret-hashing.key"
if [ -e "$target" ]; then
  if [ "$(tr -d ' \t\r\n' < "$target")" = "$(tr -d ' \t\r\n' < "$source")" ]; then exit 0; fi
  echo "$target differs from the secret-hashing key in the Secret; refusing to replace it (stored credentials were hashed with one of them). Compare the two, then delete the wrong one." >&2
  exit 1
fi
cp "$source" "$target.new"
chmod 0600 "$target.new"
mv "$target.new" "$target"
{{- end }}

{{/*
The pod template of one role. Call with (list $ "issuer").
*/}}
{{- define "tessera.podTemplate" -}}
{{- $root := index . 0 }}
{{- $role := index . 1 }}
{{- $v := $root.Values }}
{{- $roleValues := index $v $role }}
{{- $kafkaFed := and (eq $role "verifier") (include "tessera.kafkaFedVerifier" $root) -}}
metadata:
  labels:
    {{- include "tessera.labels" (list $root $role) | nindent 4 }}
  annotations:
    # A changed setting rolls the pods: environment variables are read once, at start.
    checksum/config: {{ include "tessera.roleConfig" (list $root $role) | sha256sum }}
    {{- with $roleValues.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  # Service links would put <SERVICE>_PORT variables into the environment: a Service named
  # `tessera` in the namespace would set TESSERA_PORT to tcp://… and stop the start.
  enableServiceLinks: false
  automountServiceAccountToken: false
  {{- with $v.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml $v.podSecurityContext | nindent 4 }}
  # SIGTERM drains in-flight requests and closes the store; the relay also flushes what it read.
  terminationGracePeriodSeconds: 30
  initContainers:
    - name: prepare-data-folder
      image: {{ include "tessera.image" $root }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      command: ["/bin/sh", "-c"]
      args:
        - |
          {{- include "tessera.prepareDataFolder" $root | nindent 10 }}
      env:
        - name: TESSERA_DATA_DIR
          value: {{ include "tessera.dataDir" $root }}
      securityContext:
        {{- toYaml $v.containerSecurityContext | nindent 8 }}
      resources:
        requests: { cpu: 10m, memory: 16Mi }
        limits: { memory: 32Mi }
      volumeMounts:
        - name: data
          mountPath: {{ include "tessera.volumeRoot" $root }}
        {{- if eq $role "issuer" }}
        - name: secret-hashing-key
          mountPath: {{ include "tessera.hashingKeyDir" $root }}
          readOnly: true
        {{- end }}
  containers:
    - name: {{ $role }}
      image: {{ include "tessera.image" $root }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      # The image's entry point is tini and the CLI; the argument picks the role.
      args: [{{ $role | quote }}]
      envFrom:
        - configMapRef:
            name: {{ include "tessera.roleName" (list $root $role) }}
      {{- if or (and $v.eventStore.existingSecret (not $kafkaFed)) (eq $role "issuer") $v.tls.caKey $v.tracing.headers.existingSecret }}
      env:
        {{- if and $v.eventStore.existingSecret (not $kafkaFed) }}
        - name: TESSERA_EVENT_STORE
          valueFrom:
            secretKeyRef:
              name: {{ $v.eventStore.existingSecret }}
              key: {{ $v.eventStore.existingSecretKey }}
        {{- end }}
        {{- if and (eq $role "issuer") $v.regions.peers }}
        - name: TESSERA_PEER_SECRET
          valueFrom:
            secretKeyRef:
              name: {{ include "tessera.peerSecretName" $root }}
              key: {{ $v.peerSecret.existingSecretKey }}
        {{- end }}
        {{- if eq $role "issuer" }}
        # One replica holds the Shared Signals delivery lease; the others forward polls to it at its
        # own pod's name (the headless Service), which a StatefulSet pod keeps across restarts.
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        - name: TESSERA_SSF_REPLICA_URL
          value: {{ printf "https://$(POD_NAME).%s:%v" (include "tessera.roleName" (list $root "issuer" "pods")) $v.ports.public | quote }}
        {{- end }}
        {{- if $v.tracing.headers.existingSecret }}
        # Often a vendor's API key: from the Secret, never the ConfigMap.
        - name: OTEL_EXPORTER_OTLP_HEADERS
          valueFrom:
            secretKeyRef:
              name: {{ $v.tracing.headers.existingSecret }}
              key: {{ $v.tracing.headers.existingSecretKey }}
        {{- end }}
        {{- if $v.tls.caKey }}
        - name: NODE_EXTRA_CA_CERTS
          value: {{ printf "%s/%s" (include "tessera.tlsDir" $root) $v.tls.caKey }}
        {{- end }}
      {{- end }}
      ports:
        - name: https
          containerPort: {{ $v.ports.public }}
        {{- if and (eq $role "issuer") $v.issuer.legacyPort }}
        - name: legacy
          containerPort: {{ $v.issuer.legacyPort }}
        {{- end }}
        - name: admin
          containerPort: {{ $v.ports.admin }}
      # /healthz answers 200 while the process runs, whatever its sources do; /readyz only while it
      # can do its job (store available, read models caught up). Both on the admin listener.
      startupProbe:
        httpGet: { path: /healthz, port: admin, scheme: HTTPS }
        {{- toYaml $v.probes.startup | nindent 8 }}
      livenessProbe:
        httpGet: { path: /healthz, port: admin, scheme: HTTPS }
        {{- toYaml $v.probes.liveness | nindent 8 }}
      readinessProbe:
        httpGet: { path: /readyz, port: admin, scheme: HTTPS }
        {{- toYaml $v.probes.readiness | nindent 8 }}
      resources:
        {{- toYaml $roleValues.resources | nindent 8 }}
      securityContext:
        {{- toYaml $v.containerSecurityContext | nindent 8 }}
      volumeMounts:
        - name: data
          mountPath: {{ include "tessera.volumeRoot" $root }}
        - name: tmp
          mountPath: /tmp
        {{- if include "tessera.tlsConfigured" $root }}
        - name: tls
          mountPath: {{ include "tessera.tlsDir" $root }}
          readOnly: true
        {{- end }}
        {{- if and $v.kafka.brokers $v.kafka.tls.enabled $v.kafka.tls.existingSecret }}
        - name: kafka-tls
          mountPath: {{ include "tessera.kafkaTlsDir" $root }}
          readOnly: true
        {{- end }}
        {{- if and $v.kafka.brokers $v.kafka.sasl.mechanism }}
        - name: kafka-sasl
          mountPath: {{ include "tessera.kafkaSaslDir" $root }}
          readOnly: true
        {{- end }}
        {{- if and (eq $role "issuer") $v.admin.bootstrapToken.existingSecret }}
        - name: admin-bootstrap
          mountPath: {{ include "tessera.adminBootstrapDir" $root }}
          readOnly: true
        {{- end }}
  volumes:
    {{- if eq $role "verifier" }}
    # Nothing of a verifier's outlives it: a self-signed certificate at most.
    - name: data
      emptyDir: {}
    {{- end }}
    - name: tmp
      emptyDir: {}
    {{- if eq $role "issuer" }}
    - name: secret-hashing-key
      secret:
        secretName: {{ include "tessera.hashingKeySecret" $root }}
        items:
          - key: {{ $v.secretHashingKey.existingSecretKey }}
            path: secret-hashing.key
        # Group-readable: fsGroup is the service user's group; the files belong to root.
        defaultMode: 0440
    {{- end }}
    {{- if include "tessera.tlsConfigured" $root }}
    - name: tls
      secret:
        secretName: {{ include "tessera.tlsSecret" $root }}
        defaultMode: 0440
    {{- end }}
    {{- if and $v.kafka.brokers $v.kafka.tls.enabled $v.kafka.tls.existingSecret }}
    - name: kafka-tls
      secret:
        secretName: {{ $v.kafka.tls.existingSecret }}
        defaultMode: 0440
    {{- end }}
    {{- if and $v.kafka.brokers $v.kafka.sasl.mechanism }}
    - name: kafka-sasl
      secret:
        secretName: {{ $v.kafka.sasl.existingSecret }}
        items:
          - key: {{ $v.kafka.sasl.existingSecretKey }}
            path: {{ $v.kafka.sasl.existingSecretKey }}
        defaultMode: 0440
    {{- end }}
    {{- if and (eq $role "issuer") $v.admin.bootstrapToken.existingSecret }}
    # Read at every start; registered only while the log holds no admin token.
    - name: admin-bootstrap
      secret:
        secretName: {{ $v.admin.bootstrapToken.existingSecret }}
        items:
          - key: {{ $v.admin.bootstrapToken.existingSecretKey }}
            path: token
        defaultMode: 0440
    {{- end }}
  {{- with $roleValues.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $roleValues.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $roleValues.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
