#!/usr/bin/env bash
# Fuzzes a running all-in-one against its own /openapi.json with schemathesis, every check on:
# no 5xx, and every answer (status, content type, headers, body) as the document says.
# Writes "<operations passed> <operations failed> <cases generated>" to $1 when given.
# Needs schemathesis on PATH (.ci/run installs it from PyPI) and a build (npm run build).
set -euo pipefail
cd "$(dirname "$0")/../.."
counts_file="${1:-}"
examples="${TESSERA_FUZZ_EXAMPLES:-50}"
work=$(mktemp -d)
data="$work/data"
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
port=$(free_port)
admin_port=$(free_port)

# An admin token with every scope, registered at start as an operator would (never printed): the
# admin listener's own document is fuzzed with it below, the account routes included.
node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64url"))' >"$work/admin-token"
chmod 600 "$work/admin-token"
TESSERA_DATA_DIR="$data" TESSERA_PORT="$port" TESSERA_ADMIN_PORT="$admin_port" TESSERA_LOG_LEVEL=warn \
  TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE="$work/admin-token" \
  node services/cli/bin/tessera.js start >"$work/server.log" 2>&1 &
server=$!
cleanup() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

base="https://localhost:$port"
for _ in $(seq 1 150); do
  if [ -f "$data/tls/self-signed.crt" ] && curl -sf --cacert "$data/tls/self-signed.crt" "$base/readyz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then echo "the all-in-one exited:"; cat "$work/server.log"; exit 1; fi
  sleep 0.2
done
ca="$data/tls/self-signed.crt"

# A real account and token, so protected routes are fuzzed past their 401. Neither is printed:
# the token goes to schemathesis in a header, and --output-sanitize masks it in any report line.
credentials=$(TESSERA_DATA_DIR="$data" node services/cli/bin/tessera.js accounts create --name "Fuzz shop" --permission transaction:charge --json)
sleep 1
token=$(printf '%s' "$credentials" | NODE_EXTRA_CA_CERTS="$ca" node -e '
  let input = ""; process.stdin.on("data", (c) => (input += c)).on("end", async () => {
    const { api_login_id, transaction_key } = JSON.parse(input);
    const answer = await fetch(process.argv[1] + "/v5/Authorization/get-oauth-token", {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ api_login_id, transaction_key }) });
    if (answer.status !== 200) { console.error("could not get a token: HTTP " + answer.status); process.exit(1); }
    process.stdout.write((await answer.json()).token);
  });' "$base")

operations=0
failed=0
generated=0
# One pass: adds its operations, failures and generated cases to the totals.
fuzz() { # name, Authorization header value, more schemathesis arguments...
  local name=$1 authorization=$2 status suite cases
  shift 2
  set +e
  NODE_EXTRA_CA_CERTS="$ca" schemathesis ${config:+--config-file "$config"} run "${document:-$base}/openapi.json" \
    --tls-verify "$ca" \
    --checks all \
    --max-examples "$examples" \
    --seed 20261123 \
    --header "Authorization: $authorization" \
    --output-sanitize true \
    --report junit --report-dir "$work/report-$name" \
    --no-color "$@" 2>&1 | tee "$work/schemathesis-$name.out" | grep -vE '^\s*$' | tail -60
  status=${PIPESTATUS[0]}
  set -e
  cases=$(grep -oE '[0-9]+ generated' "$work/schemathesis-$name.out" | tail -1 | grep -oE '[0-9]+' || echo 0)
  # The suite line carries the per-operation totals: tests="N" failures="F" errors="E".
  suite=$(grep -m1 '<testsuite ' "$(ls "$work"/report-"$name"/junit*.xml 2>/dev/null | head -1)" 2>/dev/null || true)
  attribute() { printf '%s' "$suite" | grep -oE " $1=\"[0-9]+\"" | grep -oE '[0-9]+' || echo 0; }
  local pass_operations pass_failed
  pass_operations=$(attribute tests)
  pass_failed=$(( $(attribute failures) + $(attribute errors) ))
  if [ "$status" -ne 0 ] && [ "$pass_failed" -eq 0 ]; then pass_failed=1; fi
  operations=$(( operations + pass_operations ))
  failed=$(( failed + pass_failed ))
  generated=$(( generated + cases ))
}

# Every operation with an access token (the Shared Signals routes answer it 401).
fuzz all "Bearer $token"
# The Shared Signals routes once more with a receiver token of their own, past their 401. Not the
# operations that set a push endpoint: a fuzzed endpoint would send SETs off this machine.
receiver_token=$(TESSERA_DATA_DIR="$data" node services/cli/bin/tessera.js ssf-receivers create --name "Fuzz receiver" --json |
  node -e 'let input = ""; process.stdin.on("data", (c) => (input += c)).on("end", () => process.stdout.write(JSON.parse(input).token));')
sleep 1
fuzz ssf "Bearer $receiver_token" --include-path-regex '^/ssf/' --exclude-name-regex '^(POST|PUT|PATCH) /ssf/streams$'
# The OAuth 2.0 endpoints once more as a client that authenticates (client_secret_basic), past their
# 401: a resource server's account, so introspection answers in full. Its secret goes in the header
# only, and --output-sanitize masks the header in any report line.
gateway_basic=$(TESSERA_DATA_DIR="$data" node services/cli/bin/tessera.js accounts create --name "Fuzz gateway" --permission tessera:introspect --permission transaction:charge --json |
  node -e 'let input = ""; process.stdin.on("data", (c) => (input += c)).on("end", () => { const { api_login_id, transaction_key } = JSON.parse(input); process.stdout.write(Buffer.from(api_login_id + ":" + transaction_key).toString("base64")); });')
sleep 1
# Every check but positive_data_acceptance: RFC 6749 section 5.2 answers a well-formed refresh token,
# scope or resource that the server does not know with 400 (invalid_grant, invalid_scope,
# invalid_target), which no schema can tell from a valid one. Server errors, answers off the
# document and malformed input let through are all still checked.
fuzz oauth "Basic $gateway_basic" --include-path-regex '^/oauth2/' --exclude-checks positive_data_acceptance

# The admin listener's account routes (accounts:read, accounts:write), with the bootstrap token
# (admin-schemathesis.toml: the router's 414 is a rejection too). Not positive_data_acceptance: the
# account service's rules (an audience is an absolute URI without a fragment, a JWK a public key of
# an allowed type, a name holds no control character) are more than a schema says, and a value the
# schema takes that they refuse is rightly a 400. Not ensure_resource_availability: rotate-key with
# an API Login ID the account does not have is a 404 naming that ID, not the account gone.
# access-at and revoke-tokens are the audit and revocation routes', fuzzed on their own terms later.
admin_token=$(cat "$work/admin-token")
document="https://localhost:$admin_port" config="test/fuzz/admin-schemathesis.toml" fuzz admin "Bearer $admin_token" \
  --include-path-regex '^/admin/v1/accounts' --exclude-path-regex '/(access-at|revoke-tokens)$' \
  --exclude-checks positive_data_acceptance,ensure_resource_availability

passed=$(( operations - failed ))
[ "$passed" -lt 0 ] && passed=0
echo "schemathesis: $generated cases generated over $operations operations; $failed operation(s) failed"
if grep -q '"level":50\|"level":60' "$work/server.log"; then
  echo "the server logged errors while being fuzzed:"; grep '"level":50\|"level":60' "$work/server.log" | cut -c1-300 | head -20
  failed=$(( failed + 1 ))
fi
[ -n "$counts_file" ] && echo "$passed $failed $generated" >"$counts_file"
[ "$failed" -eq 0 ]
