"""Asserts the objects a rendered chart holds besides the workloads: routes, policy, autoscaler.

Usage: assert_objects.py FILE EXPECTATION...

  none:KIND                  no object of that kind was rendered
  ingress:SERVICE/PORT       one Ingress, every path to Service SERVICE, port name PORT
  httproute:SERVICE/PORT     one HTTPRoute, every backend Service SERVICE, port number PORT
  hpa:NAME/MIN/MAX           a HorizontalPodAutoscaler of Deployment NAME, MIN to MAX replicas,
                             and that Deployment leaves its replica count to it
  admin-from:NS[,NS...]      a NetworkPolicy opening the public port to all and the admin port only
                             to those namespaces; admin-from: (empty) opens the admin port to none
  dashboard:FILE             a ConfigMap labelled grafana_dashboard "1" holding FILE's JSON;
                             dashboard: (empty) no such ConfigMap

Prints one line per failed expectation and exits 1 when any failed.
"""

import json
import sys

import yaml


def of_kind(docs, kind):
    return [doc for doc in docs if doc["kind"] == kind]


def check(docs, expectation):
    what, _, argument = expectation.partition(":")
    if what == "none":
        found = of_kind(docs, argument)
        return f"{len(found)} {argument} rendered" if found else None
    if what == "ingress":
        service, port = argument.split("/")
        ingresses = of_kind(docs, "Ingress")
        if len(ingresses) != 1:
            return f"{len(ingresses)} Ingresses"
        backends = [path["backend"]["service"] for rule in ingresses[0]["spec"]["rules"] for path in rule["http"]["paths"]]
        wrong = [b for b in backends if b != {"name": service, "port": {"name": port}}]
        return f"backends {wrong}" if wrong or not backends else None
    if what == "httproute":
        service, port = argument.split("/")
        routes = of_kind(docs, "HTTPRoute")
        if len(routes) != 1:
            return f"{len(routes)} HTTPRoutes"
        backends = [ref for rule in routes[0]["spec"]["rules"] for ref in rule["backendRefs"]]
        wrong = [b for b in backends if b != {"name": service, "port": int(port)}]
        return f"backends {wrong}" if wrong or not backends else None
    if what == "hpa":
        name, low, high = argument.split("/")
        hpas = [hpa for hpa in of_kind(docs, "HorizontalPodAutoscaler") if hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}]
        if len(hpas) != 1:
            return f"{len(hpas)} HorizontalPodAutoscalers of Deployment {name}"
        spec = hpas[0]["spec"]
        if (spec["minReplicas"], spec["maxReplicas"]) != (int(low), int(high)):
            return f"replicas {spec['minReplicas']} to {spec['maxReplicas']}"
        deployment = next((d for d in of_kind(docs, "Deployment") if d["metadata"]["name"] == name), None)
        if deployment is None or "replicas" in deployment["spec"]:
            return f"Deployment {name} missing, or it sets replicas (each upgrade would reset the autoscaler's count)"
        return None
    if what == "admin-from":
        wanted = sorted(filter(None, argument.split(",")))
        policies = of_kind(docs, "NetworkPolicy")
        if len(policies) != 1:
            return f"{len(policies)} NetworkPolicies"
        rules = policies[0]["spec"].get("ingress", [])
        public = [rule for rule in rules if "from" not in rule and [p["port"] for p in rule["ports"]][:1] == ["https"]]
        admin = [rule for rule in rules if any(p["port"] == "admin" for p in rule.get("ports", []))]
        if not public:
            return "no rule opens the public port to every source"
        if any("ports" not in rule or "from" not in rule for rule in rules if rule not in public):
            return "a rule opens every port, or opens a port to every source besides the public one"
        allowed = sorted(value for rule in admin for peer in rule["from"] for expression in peer["namespaceSelector"]["matchExpressions"] for value in expression["values"])
        return None if allowed == wanted else f"admin port open to namespaces {allowed}"
    if what == "dashboard":
        maps = [m for m in of_kind(docs, "ConfigMap") if m["metadata"].get("labels", {}).get("grafana_dashboard") == "1"]
        if not argument:
            return f"{len(maps)} dashboard ConfigMaps rendered" if maps else None
        with open(argument, encoding="utf-8") as stream:
            dashboard = json.load(stream)
        if len(maps) != 1:
            return f"{len(maps)} ConfigMaps labelled grafana_dashboard: \"1\""
        shipped = [json.loads(text) for text in maps[0]["data"].values()]
        return None if shipped == [dashboard] else "its JSON differs from the dashboard file"
    return f"unknown expectation {expectation}"


def main(argv):
    with open(argv[1], encoding="utf-8") as stream:
        docs = [doc for doc in yaml.safe_load_all(stream) if doc]
    failures = [(expectation, check(docs, expectation)) for expectation in argv[2:]]
    failures = [(expectation, problem) for expectation, problem in failures if problem]
    for expectation, problem in failures:
        print(f"  {expectation}: {problem}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
