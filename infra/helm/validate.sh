#!/usr/bin/env bash
# Checks the Helm chart infra/helm/tessera offline, as .ci/run does and as a developer can:
#
#   infra/helm/validate.sh [COUNTS_FILE]
#
# - helm lint --strict with the default values and with each file in infra/helm/examples/;
# - helm template with the same values, and every rendered manifest validated against the
#   Kubernetes schemas (kubernetes-validate, strict: an unknown field fails) of the oldest version
#   the chart supports and of the newest kubernetes-validate knows. The ServiceMonitor and the
#   HTTPRoute, custom resources without a shipped schema, are rendered but not schema-checked (the
#   examples turn them on; an HTTPRoute's structure is checked); every other kind without a schema
#   fails;
# - each container's environment through Tessera's own configuration loader (check-config.mjs);
# - what each setting renders to: the variables and Secret-mounted files each role's container
#   gets (assert_rendered.py), and the routes, NetworkPolicy, autoscaler and dashboard
#   (assert_objects.py);
# - values the chart must refuse are refused (values.schema.json, and the templates' own checks),
#   with the message that names them;
# - the data-folder init container's script, run with sh on a scratch volume.
#
# Tools are made on first use and cached in ~/.cache/tessera/: helm built from the Go module proxy,
# with the flags of its own Makefile (so it knows a Kubernetes version: no --kube-version needed),
# with `go install` (Go 1.23 or later), kubernetes-validate from PyPI. Exits non-zero when any check
# fails; with COUNTS_FILE, also writes "passed failed skipped" there for the CI summary.
set -uo pipefail
cd "$(dirname "$0")"

# 3.17 is the newest Helm line whose go.mod asks for no more than Go 1.23, the oldest Go that
# .ci/run may install (bookworm-backports); later lines need Go 1.24 to 1.26.
HELM_VERSION=v3.17.4
KUBERNETES_VALIDATE_VERSION=1.37.0
# The chart's kubeVersion floor, and the newest schemas kubernetes-validate ships.
KUBERNETES_VERSIONS=1.29.0,1.37.0
cache="$HOME/.cache/tessera"
counts_file="${1:-}"
passed=0 failed=0 skipped=0
pass() { passed=$((passed + 1)); printf 'ok   %s\n' "$1"; }
fail() { failed=$((failed + 1)); printf 'FAIL %s\n' "$1"; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

find_go() {
  local candidate
  for candidate in "$(command -v go || true)" /usr/local/go/bin/go /usr/lib/go-*/bin/go; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    if "$candidate" version | grep -Eq 'go1\.(2[3-9]|[3-9][0-9])'; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

# The flags helm's own Makefile builds a release with. Without the Kubernetes version ones, helm
# assumes Kubernetes 1.20 (pkg/chartutil's default), so a chart whose kubeVersion asks for more
# renders only with --kube-version; the Makefile derives 1.32 from the k8s.io/client-go v0.32 in
# helm's go.mod (major + 1 . minor), checked below when helm is built.
HELM_KUBERNETES_MAJOR=1 HELM_KUBERNETES_MINOR=32
helm_ldflags="-w -s -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.metadata="
helm_ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for package in pkg/lint/rules pkg/chartutil; do
  helm_ldflags+=" -X helm.sh/helm/v3/$package.k8sVersionMajor=$HELM_KUBERNETES_MAJOR -X helm.sh/helm/v3/$package.k8sVersionMinor=$HELM_KUBERNETES_MINOR"
done
# The cache folder is named after the flags too, so changing them rebuilds helm instead of
# reusing one built with the old ones.
helm="$cache/helm-$HELM_VERSION-$(printf '%s' "$helm_ldflags" | sha256sum | cut -c1-12)/helm"
if [ ! -x "$helm" ]; then
  go=$(find_go) || { echo "validate.sh: Go 1.23 or later is needed to build helm $HELM_VERSION" >&2; exit 1; }
  echo "building helm $HELM_VERSION with $("$go" version) (a few minutes, once)"
  helm_module=$(GOTOOLCHAIN=local "$go" mod download -json "helm.sh/helm/v3@$HELM_VERSION" | python3 -c 'import json, sys; print(json.load(sys.stdin)["GoMod"])') ||
    { echo "validate.sh: could not download helm $HELM_VERSION from the Go module proxy" >&2; exit 1; }
  client_go=$(grep -Eo 'k8s.io/client-go v0\.[0-9]+' "$helm_module" | head -1)
  if [ "$client_go" != "k8s.io/client-go v0.$HELM_KUBERNETES_MINOR" ]; then
    echo "validate.sh: helm $HELM_VERSION's go.mod has ${client_go:-no k8s.io/client-go}; set HELM_KUBERNETES_MINOR to match, as helm's Makefile would" >&2
    exit 1
  fi
  # Built into a scratch folder and moved into place whole, so a broken build is never cached.
  GOBIN="$scratch/helm-bin" GOTOOLCHAIN=local CGO_ENABLED=0 "$go" install -trimpath -ldflags "$helm_ldflags" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" || { echo "validate.sh: go install helm $HELM_VERSION failed" >&2; exit 1; }
  mkdir -p "$(dirname "$helm")" && mv "$scratch/helm-bin/helm" "$helm"
fi

validator="$cache/kubernetes-validate-$KUBERNETES_VALIDATE_VERSION"
if [ ! -f "$validator/.installed" ]; then
  # A folder of its own (pip --target) rather than the system's site-packages or a venv, which
  # Debian's python3 cannot make without python3-venv.
  rm -rf "$validator"
  python3 -m pip install --quiet --disable-pip-version-check --target "$validator" \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" >/dev/null ||
    { echo "validate.sh: could not install kubernetes-validate $KUBERNETES_VALIDATE_VERSION from PyPI" >&2; exit 1; }
  touch "$validator/.installed"
fi
python_with_validator() { PYTHONPATH="$validator" python3 "$@"; }
"$helm" version --short
echo "kubernetes-validate $KUBERNETES_VALIDATE_VERSION, schemas of Kubernetes ${KUBERNETES_VERSIONS//,/ and }"

chart=tessera

value_sets=("default values")
for example in examples/*.yaml; do value_sets+=("$example"); done

# Lint and render each value set, then validate what was rendered.
rendered=()
for values in "${value_sets[@]}"; do
  flags=()
  # The default values leave publicUrl empty, which the chart refuses (checked below): name one.
  flags=(--set publicUrl=https://auth.example.com)
  [ "$values" = "default values" ] || flags=(--values "$values")
  if lint=$("$helm" lint --strict "$chart" "${flags[@]}" 2>&1); then
    pass "helm lint --strict ($values)"
  else
    fail "helm lint --strict ($values)"; printf '%s\n' "$lint"
  fi
  out="$scratch/rendered-$(basename "$values" .yaml | tr ' ' '-').yaml"
  if "$helm" template tessera "$chart" "${flags[@]}" --namespace tessera >"$out" 2>"$out.err"; then
    pass "helm template ($values)"
    rendered+=("$out")
  else
    fail "helm template ($values)"; cat "$out.err"
  fi
done

# The install commands the documentation shows, as written there (helm template instead of
# helm install, run from the repository's root where their paths start): what a newcomer pastes
# must render with nothing added.
documented=0 arguments=()
# Each command comes as its words (shlex, as a shell splits them; nothing is evaluated), each
# ended by a NUL, and an empty word after its last.
while IFS= read -r -d '' word; do
  if [ -n "$word" ]; then arguments+=("$word"); continue; fi
  documented=$((documented + 1))
  if (cd ../.. && "$helm" template "${arguments[@]:2}") >"$scratch/documented.yaml" 2>"$scratch/documented.err"; then
    pass "helm template as documented: ${arguments[*]:2}"
  else
    fail "helm template as documented: ${arguments[*]}"; cat "$scratch/documented.err"
  fi
  arguments=()
done < <(python3 - ../../docs/*.md ../../README.md <<'PY'
import re, shlex, sys
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M):
        for command in re.findall(r"^(helm install (?:[^\n]*\\\n)*[^\n]*)", block, flags=re.M):
            for word in shlex.split(command.replace("\\\n", " "), comments=True):
                sys.stdout.write(word + "\0")
            sys.stdout.write("\0")
PY
)
[ "$documented" -gt 0 ] || fail "no helm install command found in docs/*.md"

# Secrets the chart makes from values given at install time: throwaway material made here.
head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' >"$scratch/secret-hashing.key"
head -c 48 /dev/urandom | base64 | tr -d '\n' >"$scratch/peer-secret"
printf 'not a certificate, only rendered\n' >"$scratch/tls.crt"
printf 'not a key, only rendered\n' >"$scratch/tls.key"
out="$scratch/rendered-secrets-from-values.yaml"
if "$helm" template tessera "$chart" --namespace tessera --set publicUrl=https://auth.example.com \
  --set secretHashingKey.existingSecret= --set-file secretHashingKey.value="$scratch/secret-hashing.key" \
  --set regions.name=eu1 --set regions.peers.us1=https://tessera-issuer.us1.example.internal:8443 \
  --set-file peerSecret.value="$scratch/peer-secret" \
  --set-file tls.cert="$scratch/tls.crt" --set-file tls.key="$scratch/tls.key" >"$out" 2>"$out.err"; then
  pass "helm template (Secrets made from --set-file values)"
  rendered+=("$out")
else
  fail "helm template (Secrets made from --set-file values)"; cat "$out.err"
fi

if [ "${#rendered[@]}" -gt 0 ]; then
  report=$(python_with_validator validate_manifests.py "$KUBERNETES_VERSIONS" "${rendered[@]}")
  validate_status=$?
  printf '%s\n' "$report" | sed "s|$scratch/||g"
  summary=$(printf '%s\n' "$report" | tail -1)
  read -r valid invalid skip <<<"$(sed -E 's/^manifests: ([0-9]+) valid, ([0-9]+) invalid, ([0-9]+) skipped$/\1 \2 \3/' <<<"$summary")"
  passed=$((passed + ${valid:-0})) failed=$((failed + ${invalid:-0})) skipped=$((skipped + ${skip:-0}))
  if [ "$validate_status" -ne 0 ] && [ "${invalid:-0}" -eq 0 ]; then fail "kubernetes-validate ran (exit $validate_status)"; fi

  # Each container's environment, parsed by Tessera's own configuration loader (compiled by npm ci).
  report=$(node check-config.mjs "${rendered[@]}" 2>&1)
  config_status=$?
  printf '%s\n' "$report"
  summary=$(printf '%s\n' "$report" | tail -1)
  if [[ "$summary" =~ ^config:\ ([0-9]+)\ valid,\ ([0-9]+)\ invalid$ ]]; then
    passed=$((passed + BASH_REMATCH[1])) failed=$((failed + BASH_REMATCH[2]))
    [ "$config_status" -eq 0 ] || [ "${BASH_REMATCH[2]}" -gt 0 ] || fail "check-config.mjs (exit $config_status)"
  else
    fail "check-config.mjs did not run (run npm ci first: it compiles @tessera/config)"
  fi
fi

# Values that would give pods that cannot start, or that disagree, must stop the render.
refuses() { # description, expected message, helm flags...
  local description=$1 expected=$2 output
  shift 2
  # A public URL, so each refusal is the one its flags cause; the publicUrl checks override it.
  if output=$("$helm" template tessera "$chart" --set publicUrl=https://auth.example.com "$@" 2>&1); then
    fail "refuses $description: it rendered"
  elif grep -qF -- "$expected" <<<"$output"; then
    pass "refuses $description"
  else
    fail "refuses $description: wrong message"; printf '%s\n' "$output"
  fi
}
refuses "a release without its public URL" "publicUrl: set the https URL clients reach Tessera at" --set publicUrl=
refuses "a public URL that is not https" "publicUrl must be an https URL" --set publicUrl=http://auth.example.com
refuses "an embedded SQLite log shared by pods" "cannot share a SQLite file" --set eventStore.url=sqlite:/var/lib/tessera/events.db
refuses "issuers without a secret-hashing key" "secretHashingKey: name the Secret" --set secretHashingKey.existingSecret=
refuses "peer regions without the peer secret" "regions.peers needs the peer secret" --set regions.name=eu1 --set regions.peers.us1=https://us1.example.internal:8443
refuses "a relay without Kafka" "relay.enabled needs kafka.brokers" --set kafka.brokers=
refuses "the peer secret in the ConfigMap" "a secret does not go in a ConfigMap" --set config.TESSERA_PEER_SECRET=x

# Values the schema (tessera/values.schema.json) refuses: wrong types, unknown keys, and the
# contradictions Tessera itself refuses at start, each named in helm's message.
refuses "a replica count below 1" "issuer.replicas: Must be greater than or equal to 1" --set issuer.replicas=0
refuses "verifier autoscaling down to 0" "verifier.autoscaling.minReplicas: Must be greater than or equal to 1" --set verifier.autoscaling.enabled=true --set verifier.autoscaling.minReplicas=0
refuses "autoscaling with its minimum above its maximum" "verifier.autoscaling.minReplicas must not exceed verifier.autoscaling.maxReplicas" --set verifier.autoscaling.enabled=true --set verifier.autoscaling.minReplicas=5 --set verifier.autoscaling.maxReplicas=3
refuses "a port that is not a number" "ports.public: Invalid type. Expected: integer" --set ports.public=https
refuses "the admin port on the public one" "ports.admin must differ from ports.public" --set ports.admin=8443
refuses "a misspelt value" "Additional property replica is not allowed" --set verifier.replica=3
refuses "a nested value in config" "config.TESSERA_LOG_LEVEL: Invalid type" --set config.TESSERA_LOG_LEVEL.level=info
refuses "Kafka SASL without a username" "kafka.sasl.username: String length must be greater than or equal to 1" --set kafka.sasl.mechanism=scram-sha-512 --set kafka.sasl.existingSecret=tessera-kafka-sasl
refuses "Kafka SASL without the password's Secret" "kafka.sasl.existingSecret: String length must be greater than or equal to 1" --set kafka.sasl.mechanism=scram-sha-512 --set kafka.sasl.username=tessera
refuses "a Kafka SASL username without a mechanism" "kafka.sasl.mechanism: String length must be greater than or equal to 1" --set kafka.sasl.username=tessera
refuses "an unknown Kafka SASL mechanism" "kafka.sasl.mechanism: kafka.sasl.mechanism must be one of the following" --set kafka.sasl.mechanism=gssapi
refuses "Kafka SASL plain without TLS" "kafka.tls.enabled: kafka.tls.enabled does not match: true" --set kafka.sasl.mechanism=plain --set kafka.sasl.username=tessera --set kafka.sasl.existingSecret=tessera-kafka-sasl
refuses "a Kafka client certificate without its key" "kafka.tls.keyKey: String length must be greater than or equal to 1" --set kafka.tls.enabled=true --set kafka.tls.existingSecret=tessera-kafka-tls --set kafka.tls.certKey=tls.crt
refuses "a Kafka client key without its certificate" "kafka.tls.certKey: String length must be greater than or equal to 1" --set kafka.tls.enabled=true --set kafka.tls.existingSecret=tessera-kafka-tls --set kafka.tls.keyKey=tls.key
refuses "a Kafka TLS Secret with TLS off" "kafka.tls.enabled: kafka.tls.enabled does not match: true" --set kafka.tls.existingSecret=tessera-kafka-tls
refuses "a TLS certificate without its key" "tls.key: String length must be greater than or equal to 1" --set tls.cert=x
refuses "an Ingress to the admin port" "ingress.port: ingress.port must be one of the following" --set ingress.enabled=true --set ingress.port=admin
refuses "an HTTPRoute to the admin port" "httpRoute.port: httpRoute.port must be one of the following" --set httpRoute.enabled=true --set 'httpRoute.parentRefs[0].name=public' --set httpRoute.port=admin
refuses "an Ingress to the relay" "ingress.service: ingress.service must be one of the following" --set ingress.enabled=true --set ingress.service=relay
refuses "an HTTPRoute without a Gateway" "httpRoute.parentRefs: Array must have at least 1 items" --set httpRoute.enabled=true
refuses "a legacy route without the legacy port" "ingress.port legacy needs service issuer and issuer.legacyPort" --set ingress.enabled=true --set ingress.port=legacy
refuses "OTLP headers without an endpoint" "tracing.otlpEndpoint: String length must be greater than or equal to 1" --set tracing.headers.existingSecret=tessera-otlp
refuses "an unknown OTLP protocol" "tracing.protocol: tracing.protocol must be one of the following" --set tracing.otlpEndpoint=http://otel:4318 --set tracing.protocol=thrift
refuses "a Shared Signals lease under 3 seconds" "ssf.leaseTtl: Must be greater than or equal to 3" --set ssf.leaseTtl=2
refuses "a Shared Signals poll wait given as text" "ssf.pollWait: Does not match pattern" --set-string ssf.pollWait=long
refuses "bootstrap scopes without the token's Secret" "admin.bootstrapToken.existingSecret: String length must be greater than or equal to 1" --set 'admin.bootstrapToken.scopes={audit:read}'
refuses "an unknown admin scope" "admin.bootstrapToken.scopes.0: admin.bootstrapToken.scopes.0 must be one of the following" --set admin.bootstrapToken.existingSecret=tessera-admin-bootstrap --set 'admin.bootstrapToken.scopes={everything}'
refuses "a bootstrap token without issuers" "admin.bootstrapToken: the issuers register it" --set admin.bootstrapToken.existingSecret=tessera-admin-bootstrap --set issuer.enabled=false --set verifier.issuerJwksUrl=https://issuer.example.com/.well-known/jwks.json --set verifier.source=kafka

# What each role's container gets for the settings Tessera has, as Kubernetes assembles it (its
# ConfigMap, its env, the files its Secret volumes mount): assert_rendered.py.
gives() { # description, role, helm flags..., --, expectations...
  local description=$1 role=$2 out report flags=()
  shift 2
  while [ "$#" -gt 0 ] && [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  out="$scratch/gives-$((passed + failed)).yaml"
  if ! "$helm" template tessera "$chart" --namespace tessera --set publicUrl=https://auth.example.com "${flags[@]}" >"$out" 2>"$out.err"; then
    fail "$description: it did not render"; cat "$out.err"; return
  fi
  if report=$(python_with_validator assert_rendered.py "$out" "$role" "$@"); then pass "$description"; else fail "$description"; printf '%s\n' "$report"; fi
}
for role in issuer relay verifier; do
  gives "secured Kafka for the ${role}s: TLS files and the SASL password file from their Secrets" "$role" --values examples/public-ingress.yaml -- \
    TESSERA_KAFKA_TLS=true '$TESSERA_KAFKA_TLS_CA_FILE<secret:tessera-kafka-tls/ca.crt' '$TESSERA_KAFKA_TLS_CERT_FILE<secret:tessera-kafka-tls/tls.crt' \
    '$TESSERA_KAFKA_TLS_KEY_FILE<secret:tessera-kafka-tls/tls.key' TESSERA_KAFKA_SASL_MECHANISM=scram-sha-512 TESSERA_KAFKA_SASL_USERNAME=tessera \
    '$TESSERA_KAFKA_SASL_PASSWORD_FILE<secret:tessera-kafka-sasl/password' '!TESSERA_KAFKA_SASL_PASSWORD'
  gives "tracing for the ${role}s: the OTLP endpoint, and its headers from a Secret" "$role" --values examples/public-ingress.yaml -- \
    OTEL_EXPORTER_OTLP_ENDPOINT=https://otlp.vendor.example.com OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf 'OTEL_EXPORTER_OTLP_HEADERS<secret:tessera-otlp/otlp-headers' \
    OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.05
done
gives "Kafka without TLS or SASL by default" relay -- '!TESSERA_KAFKA_TLS' '!TESSERA_KAFKA_TLS_CA_FILE' '!TESSERA_KAFKA_SASL_MECHANISM' '!TESSERA_KAFKA_SASL_PASSWORD_FILE' '!OTEL_EXPORTER_OTLP_ENDPOINT' '!OTEL_EXPORTER_OTLP_HEADERS'
gives "the bootstrap admin token: a file from its Secret, with the scopes" issuer --values examples/public-ingress.yaml -- \
  '$TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE<secret:tessera-admin-bootstrap/token' TESSERA_ADMIN_BOOTSTRAP_SCOPES=audit:read,tokens:revoke,ssf:receivers
gives "the bootstrap admin token: every scope when none is named, only on issuers" issuer --set admin.bootstrapToken.existingSecret=tessera-admin-bootstrap -- \
  '$TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE<secret:tessera-admin-bootstrap/token' '!TESSERA_ADMIN_BOOTSTRAP_SCOPES'
gives "no bootstrap admin token on verifiers" verifier --values examples/public-ingress.yaml -- '!TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE' '!TESSERA_ADMIN_BOOTSTRAP_SCOPES'
gives "no bootstrap admin token by default" issuer -- '!TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE' '!TESSERA_ADMIN_BOOTSTRAP_SCOPES'
gives "the admin API on the admin listener, with its audit query budget" issuer --set admin.auditQueryBudgetMs=5000 -- \
  TESSERA_ADMIN_HOST=0.0.0.0 TESSERA_ADMIN_PORT=9443 TESSERA_AUDIT_QUERY_BUDGET_MS=5000
gives "Shared Signals settings on the issuers" issuer --values examples/gateway-api.yaml --set ssf.pauseAfter=3600 --set ssf.pushTimeout=5 --set ssf.minVerificationInterval=30 -- \
  TESSERA_SSF_POLL_WAIT=60 TESSERA_SSF_LEASE_TTL=20 TESSERA_SSF_MAX_STREAMS_PER_RECEIVER=5 TESSERA_SSF_PAUSE_AFTER=3600 TESSERA_SSF_PUSH_TIMEOUT=5 \
  TESSERA_SSF_MIN_VERIFICATION_INTERVAL=30 'TESSERA_SSF_REPLICA_URL=https://$(POD_NAME).tessera-issuer-pods:8443'
gives "Shared Signals settings only on the issuers" verifier --values examples/gateway-api.yaml -- '!TESSERA_SSF_POLL_WAIT' '!TESSERA_SSF_LEASE_TTL'

# The other objects: routes to the public listener only, the admin port's NetworkPolicy, the
# verifiers' autoscaler and the dashboard's ConfigMap (assert_objects.py).
has_objects() { # description, helm flags..., --, expectations...
  local description=$1 out report flags=()
  shift
  while [ "$#" -gt 0 ] && [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  out="$scratch/objects-$((passed + failed)).yaml"
  if ! "$helm" template tessera "$chart" --namespace tessera --set publicUrl=https://auth.example.com "${flags[@]}" >"$out" 2>"$out.err"; then
    fail "$description: it did not render"; cat "$out.err"; return
  fi
  if report=$(python_with_validator assert_objects.py "$out" "$@"); then pass "$description"; else fail "$description"; printf '%s\n' "$report"; fi
}
has_objects "default values: admin port closed to every namespace, public port open; no route, autoscaler or dashboard" -- \
  admin-from: none:Ingress none:HTTPRoute none:HorizontalPodAutoscaler none:ServiceMonitor dashboard:
has_objects "public-ingress example: Ingress to the issuers' public port, verifiers autoscaled, admin port open to monitoring, the dashboard" --values examples/public-ingress.yaml -- \
  ingress:tessera-issuer/https none:HTTPRoute hpa:tessera-verifier/2/8 admin-from:monitoring dashboard:../grafana/tessera-dashboard.json
has_objects "gateway-api example: HTTPRoute to the issuers' public port" --values examples/gateway-api.yaml -- httproute:tessera-issuer/8443 none:Ingress admin-from:monitoring
has_objects "an Ingress to the verifiers, an HTTPRoute to the legacy port" --set ingress.enabled=true --set ingress.service=verifier --set httpRoute.enabled=true \
  --set 'httpRoute.parentRefs[0].name=public' --set issuer.legacyPort=8444 --set httpRoute.port=legacy -- ingress:tessera-verifier/https httproute:tessera-issuer/8444
has_objects "the NetworkPolicy off" --set networkPolicy.enabled=false -- none:NetworkPolicy

# The init container's script, run as it is rendered, on a scratch "volume".
script="$scratch/prepare-data-folder.sh"
python_with_validator - "$scratch/rendered-default-values.yaml" "$scratch/secret" >"$script" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
issuer = next(d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"].endswith("-issuer"))
init = issuer["spec"]["template"]["spec"]["initContainers"][0]
# The Secret's mount point, moved to the scratch folder.
print(init["args"][0].replace("/etc/tessera/secret-hashing", sys.argv[2]))
PY
mode() { stat -c %a "$1"; }
volume="$scratch/volume" data="$scratch/volume/data"
mkdir -p "$volume" "$scratch/secret"
if [ -s "$script" ]; then
  cp "$scratch/secret-hashing.key" "$scratch/secret/secret-hashing.key"
  if TESSERA_DATA_DIR="$data" sh "$script" && cmp -s "$data/keys/secret-hashing.key" "$scratch/secret-hashing.key" &&
    [ "$(mode "$data")" = 700 ] && [ "$(mode "$data/keys")" = 700 ] && [ "$(mode "$data/keys/secret-hashing.key")" = 600 ]; then
    pass "data-folder init: copies the Secret's key to keys/secret-hashing.key, 0600 in 0700 folders"
  else
    fail "data-folder init: copies the Secret's key to keys/secret-hashing.key, 0600 in 0700 folders"
  fi
  if TESSERA_DATA_DIR="$data" sh "$script" && cmp -s "$data/keys/secret-hashing.key" "$scratch/secret-hashing.key"; then
    pass "data-folder init: starts again over the same key"
  else
    fail "data-folder init: starts again over the same key"
  fi
  head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' >"$scratch/secret/secret-hashing.key"
  if ! TESSERA_DATA_DIR="$data" sh "$script" 2>"$scratch/init.err" && grep -q 'refusing to replace it' "$scratch/init.err" &&
    cmp -s "$data/keys/secret-hashing.key" "$scratch/secret-hashing.key"; then
    pass "data-folder init: refuses a different key in the Secret and keeps the volume's"
  else
    fail "data-folder init: refuses a different key in the Secret and keeps the volume's"
  fi
  printf 'not base64url!\n' >"$scratch/secret/secret-hashing.key"
  rm -rf "$volume" && mkdir -p "$volume"
  if ! TESSERA_DATA_DIR="$data" sh "$script" 2>"$scratch/init.err" && grep -q 'not one line of base64url' "$scratch/init.err" && [ ! -e "$data/keys" ]; then
    pass "data-folder init: refuses a key that is not base64url and writes none"
  else
    fail "data-folder init: refuses a key that is not base64url and writes none"
  fi
  rm -rf "$volume" "$scratch/secret" && mkdir -p "$volume"
  if TESSERA_DATA_DIR="$data" sh "$script" && [ "$(mode "$data")" = 700 ] && [ ! -e "$data/keys" ]; then
    pass "data-folder init: without the Secret (relay, verifier) makes only the 0700 data folder"
  else
    fail "data-folder init: without the Secret (relay, verifier) makes only the 0700 data folder"
  fi
else
  fail "data-folder init: the issuer's init container script was not found in the default render"
fi

echo "helm chart: $passed passed, $failed failed, $skipped skipped"
[ -z "$counts_file" ] || echo "$passed $failed $skipped" >"$counts_file"
[ "$failed" -eq 0 ]
