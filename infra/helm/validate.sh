#!/usr/bin/env bash
# Checks the Helm chart infra/helm/tessera offline, as .ci/run does and as a developer can:
#
#   infra/helm/validate.sh [COUNTS_FILE]
#
# - helm lint --strict with the default values and with each file in infra/helm/examples/;
# - helm template with the same values, and every rendered manifest validated against the
#   Kubernetes schemas (kubernetes-validate, strict: an unknown field fails) of the oldest version
#   the chart supports and of the newest kubernetes-validate knows. The ServiceMonitor, a custom
#   resource without a shipped schema, is rendered but not schema-checked (the examples turn it on);
#   every other kind without a schema fails;
# - values the chart must refuse are refused, with the message that names them;
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
