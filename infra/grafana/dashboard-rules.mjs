// Turns every panel query of the Grafana dashboard into a Prometheus recording rule, so that
// `promtool check rules` parses each one as Prometheus would: a query Grafana would send and
// Prometheus refuse fails CI instead of showing "No data" on the first real incident.
//
//   node infra/grafana/dashboard-rules.mjs [DASHBOARD.json] > dashboard-rules.yml
//
// Grafana substitutes its variables before it sends a query; they are substituted here with
// values of the same shape (a regex for a multi-value label variable, a duration for the
// intervals). A variable this script does not know stops it, rather than reaching promtool as `$x`.
// Prints JSON, which is YAML, so no YAML library is needed; the count of rules goes to stderr.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dashboardFile = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), 'tessera-dashboard.json');
const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8'));

// Grafana's built-in range and interval variables, as a 5-minute scrape window would give them.
const builtIn = { __rate_interval: '5m', __interval: '1m', __range: '6h', __range_s: '21600', __interval_ms: '60000' };
// Each dashboard variable: its "All" value (the widest selection) or, without one, a literal.
const dashboardVariables = Object.fromEntries((dashboard.templating?.list ?? []).map((variable) => [variable.name, variable.allValue ?? variable.name]));
const values = { ...dashboardVariables, ...builtIn };

/** The query with $name, ${name} and ${name:format} replaced; throws on a variable it does not know. */
function substituted(expression, where) {
  return expression.replace(/\$\{([A-Za-z0-9_]+)(?::[^}]*)?\}|\$([A-Za-z0-9_]+)/g, (reference, braced, bare) => {
    const name = braced ?? bare;
    if (!Object.hasOwn(values, name)) throw new Error(`${where}: unknown variable ${reference}`);
    return values[name];
  });
}

/** Every panel, those inside collapsed rows included. */
const panels = (dashboard.panels ?? []).flatMap((panel) => [panel, ...(panel.panels ?? [])]);
const queryPanels = panels.filter((candidate) => candidate.type !== 'row');
const rules = [];
for (const panel of queryPanels) {
  const targets = panel.targets ?? [];
  if (targets.length === 0) throw new Error(`panel ${panel.id} "${panel.title}": no query`);
  for (const target of targets) {
    const where = `panel ${panel.id} "${panel.title}", query ${target.refId}`;
    if (typeof target.expr !== 'string' || target.expr.trim() === '') throw new Error(`${where}: no PromQL expression`);
    // The rule's name says which query it is, so promtool's complaint points at the panel.
    rules.push({ record: `tessera_dashboard:panel_${panel.id}_${target.refId}`, expr: substituted(target.expr, where) });
  }
}
process.stdout.write(`${JSON.stringify({ groups: [{ name: 'tessera-dashboard', rules }] }, null, 2)}\n`);
process.stderr.write(`dashboard-rules: ${rules.length} queries from ${queryPanels.length} panels\n`);
