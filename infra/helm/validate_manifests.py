"""Validates rendered Kubernetes manifests offline, against the schemas kubernetes-validate ships.

Usage: validate_manifests.py KUBERNETES_VERSION[,VERSION...] FILE...

Every document must match its kind's schema in strict mode (an unknown field is an error) for
every version given. A kind without a schema is an error too: kubernetes-validate's own command
only warns about it, which would let a misspelt kind through. The exceptions are two custom
resources whose schemas are not shipped, the Prometheus Operator's ServiceMonitor and the Gateway
API's HTTPRoute: they are skipped schema-wise, and said so. An HTTPRoute is still checked for the
structure the chart relies on (parents, and backends that are public Services of the release, never
the admin port): a broken one fails. Prints one line per document, then
"manifests: N valid, N invalid, N skipped".
"""

import sys

import yaml
from kubernetes_validate import utils

# Custom resources whose definitions live in the cluster, not in Kubernetes' own schemas.
CUSTOM_RESOURCES = {("monitoring.coreos.com/v1", "ServiceMonitor"), ("gateway.networking.k8s.io/v1", "HTTPRoute")}


def http_route_problems(doc, services):
    """What is wrong with an HTTPRoute's structure, given the rendered Services by name."""
    spec = doc.get("spec") or {}
    problems = []
    parents = spec.get("parentRefs") or []
    if not parents or not all(isinstance(parent, dict) and parent.get("name") for parent in parents):
        problems.append("spec.parentRefs: each needs a name, and there must be one")
    rules = spec.get("rules") or []
    if not rules:
        problems.append("spec.rules: none")
    for index, rule in enumerate(rules):
        for match in rule.get("matches") or []:
            path = match.get("path") or {}
            if path.get("type") not in ("PathPrefix", "Exact", "RegularExpression") or not str(path.get("value", "")).startswith("/"):
                problems.append(f"spec.rules[{index}].matches: path {path}")
        backends = rule.get("backendRefs") or []
        if not backends:
            problems.append(f"spec.rules[{index}].backendRefs: none")
        for backend in backends:
            service = services.get(backend.get("name"))
            if service is None:
                problems.append(f"spec.rules[{index}].backendRefs: Service {backend.get('name')} is not rendered")
                continue
            ports = {port["port"]: port.get("name") for port in service["spec"]["ports"]}
            if ports.get(backend.get("port")) not in ("https", "legacy"):
                problems.append(f"spec.rules[{index}].backendRefs: port {backend.get('port')} of {backend.get('name')} is not a public listener")
    return problems


def documents(path):
    with open(path, encoding="utf-8") as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc]


def main(argv):
    versions = argv[1].split(",")
    passed = failed = skipped = 0
    for path in argv[2:]:
        seen = set()
        docs = documents(path)
        services = {doc["metadata"]["name"]: doc for doc in docs if doc.get("kind") == "Service"}
        for doc in docs:
            kind = doc.get("kind", "?")
            name = (doc.get("metadata") or {}).get("name", "?")
            label = f"{path}: {kind}/{name}"
            identity = (doc.get("apiVersion"), kind, name)
            if identity in seen:
                print(f"FAIL {label}: rendered twice")
                failed += 1
                continue
            seen.add(identity)
            problems = http_route_problems(doc, services) if kind == "HTTPRoute" else []
            if problems:
                print(f"FAIL {label}: " + "; ".join(problems))
                failed += 1
                continue
            if (doc.get("apiVersion"), kind) in CUSTOM_RESOURCES:
                print(f"SKIP {label}: custom resource, no schema shipped with kubernetes-validate")
                skipped += 1
                continue
            errors = []
            for version in versions:
                try:
                    utils.validate(doc, version, strict=True)
                except utils.ValidationError as error:
                    where = ".".join(str(part) for part in error.path)
                    errors.append(f"Kubernetes {version}: {where}: {error.message}")
                except (utils.SchemaNotFoundError, utils.VersionNotSupportedError, utils.InvalidSchemaError) as error:
                    errors.append(f"Kubernetes {version}: {error.message}")
            if errors:
                print(f"FAIL {label}: " + "; ".join(errors))
                failed += 1
            else:
                print(f"ok   {label} (Kubernetes {', '.join(versions)})")
                passed += 1
    print(f"manifests: {passed} valid, {failed} invalid, {skipped} skipped")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
