"""Asserts what a rendered chart gives one role's container, as Kubernetes would assemble it.

Usage: assert_rendered.py FILE ROLE EXPECTATION...

ROLE is issuer, relay or verifier (the StatefulSet or Deployment named <release>-tessera-ROLE).
The container's environment is its ConfigMaps (envFrom) overlaid with its own env entries, and
each mounted file is traced to the Secret entry it comes from. Each EXPECTATION is one of:

  NAME=VALUE                    the variable is set to exactly VALUE
  NAME<secret:SECRET/KEY        the variable comes from entry KEY of Secret SECRET
  !NAME                         the variable is not set
  file:PATH<secret:SECRET/KEY   PATH in the container is entry KEY of Secret SECRET
  $NAME<secret:SECRET/KEY       the variable names a file that is entry KEY of Secret SECRET

Prints one line per failed expectation and exits 1 when any failed.
"""

import sys

import yaml


def documents(path):
    with open(path, encoding="utf-8") as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc]


def workload(docs, role):
    for doc in docs:
        if doc["kind"] in ("StatefulSet", "Deployment") and doc["metadata"]["name"].endswith(f"-{role}"):
            return doc
    raise SystemExit(f"no StatefulSet or Deployment for {role} was rendered")


def environment(docs, pod, container):
    config_maps = {doc["metadata"]["name"]: doc.get("data") or {} for doc in docs if doc["kind"] == "ConfigMap"}
    env = {}
    for source in container.get("envFrom", []):
        env.update(config_maps[source["configMapRef"]["name"]])
    for variable in container.get("env", []):
        secret = (variable.get("valueFrom") or {}).get("secretKeyRef")
        env[variable["name"]] = f"secret:{secret['name']}/{secret['key']}" if secret else variable.get("value")
    return env


class Files:
    """The files Secret volumes put in the container, by path, as secret:NAME/KEY."""

    def __init__(self, pod, container):
        volumes = {volume["name"]: volume for volume in pod["volumes"]}
        self.items, self.whole = {}, {}
        for mount in container.get("volumeMounts", []):
            # A volume claim template (the data volume) is not among the pod's volumes: no Secret.
            secret = volumes.get(mount["name"], {}).get("secret")
            if not secret:
                continue
            if "items" in secret:
                for item in secret["items"]:
                    self.items[f"{mount['mountPath']}/{item['path']}"] = f"secret:{secret['secretName']}/{item['key']}"
            else:
                # A whole Secret: each of its entries is a file named after its key.
                self.whole[mount["mountPath"]] = secret["secretName"]

    def get(self, path):
        if path in self.items:
            return self.items[path]
        folder, _, key = path.rpartition("/")
        return f"secret:{self.whole[folder]}/{key}" if folder in self.whole else None


def main(argv):
    docs = documents(argv[1])
    role = argv[2]
    pod = workload(docs, role)["spec"]["template"]["spec"]
    container = next(c for c in pod["containers"] if c["name"] == role)
    env, mounted = environment(docs, pod, container), Files(pod, container)
    failures = []
    for expectation in argv[3:]:
        if expectation.startswith("!"):
            if expectation[1:] in env:
                failures.append(f"{expectation[1:]} is set ({env[expectation[1:]]!r})")
        elif expectation.startswith("file:"):
            path, source = expectation[len("file:"):].split("<", 1)
            if mounted.get(path) != source:
                failures.append(f"{path}: expected from {source}, got {mounted.get(path)}")
        elif expectation.startswith("$"):
            name, source = expectation[1:].split("<", 1)
            path = env.get(name)
            if path is None or mounted.get(path) != source:
                failures.append(f"{name}={path}: expected a file from {source}, got {mounted.get(path) if path else 'no variable'}")
        elif "<" in expectation:
            name, source = expectation.split("<", 1)
            if env.get(name) != source:
                failures.append(f"{name}: expected from {source}, got {env.get(name)!r}")
        else:
            name, value = expectation.split("=", 1)
            if env.get(name) != value:
                failures.append(f"{name}: expected {value!r}, got {env.get(name)!r}")
    for failure in failures:
        print(f"  {role}: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
