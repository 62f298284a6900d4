"""Validates rendered Kubernetes manifests offline, against the schemas kubernetes-validate ships.

Usage: validate_manifests.py KUBERNETES_VERSION[,VERSION...] FILE...

Every document must match its kind's schema in strict mode (an unknown field is an error) for
every version given. A kind without a schema is an error too: kubernetes-validate's own command
only warns about it, which would let a misspelt kind through. The one exception is the
Prometheus Operator's ServiceMonitor, a custom resource whose schema is not shipped: it is
skipped, and said so. Prints one line per document, then "manifests: N valid, N invalid, N skipped".
"""

import sys

import yaml
from kubernetes_validate import utils

# Custom resources whose definitions live in the cluster, not in Kubernetes' own schemas.
CUSTOM_RESOURCES = {("monitoring.coreos.com/v1", "ServiceMonitor")}


def documents(path):
    with open(path, encoding="utf-8") as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc]


def main(argv):
    versions = argv[1].split(",")
    passed = failed = skipped = 0
    for path in argv[2:]:
        seen = set()
        for doc in documents(path):
            kind = doc.get("kind", "?")
            name = (doc.get("metadata") or {}).get("name", "?")
            label = f"{path}: {kind}/{name}"
            identity = (doc.get("apiVersion"), kind, name)
            if identity in seen:
                print(f"FAIL {label}: rendered twice")
                failed += 1
                continue
            seen.add(identity)
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
