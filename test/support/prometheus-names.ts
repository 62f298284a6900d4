/**
 * Reading metric names out of PromQL and out of a /metrics exposition, for the tests that check
 * what the alert rules and the Grafana dashboard query is what Tessera serves: a rule or a panel on
 * a misspelt or renamed metric shows nothing, and nothing else would tell.
 */

/** PromQL words that look like metric names but are operators or modifiers. */
const promqlKeywords = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects: identifiers left once strings, label matchers,
 * ranges and grouping label lists are removed, other than function names (followed by "(") and
 * keywords.
 */
export function metricNamesIn(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)) {
    if (!promqlKeywords.has(match[1]!.toLowerCase())) names.add(match[1]!);
  }
  return [...names];
}

/** Metric families by name and type, from the `# TYPE` lines of a Prometheus text exposition. */
export function familiesIn(exposition: string): Map<string, string> {
  const families = new Map<string, string>();
  for (const match of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) families.set(match[1]!, match[2]!);
  return families;
}

/**
 * Whether a series name belongs to a served family: itself, or a histogram's or summary's own
 * series. `_bucket` counts only for a histogram, and a suffix counts only when the family it
 * leaves is of a type that has it: `tessera_x_count` is not served because a gauge `tessera_x` is.
 */
export function serves(families: Map<string, string>, name: string): boolean {
  if (families.has(name)) return true;
  const suffix = /^(.+)_(bucket|sum|count)$/.exec(name);
  if (!suffix) return false;
  const type = families.get(suffix[1]!);
  return type === 'histogram' || (type === 'summary' && suffix[2] !== 'bucket');
}
