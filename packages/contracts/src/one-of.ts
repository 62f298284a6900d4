/**
 * Whether `value` is one of `values`, narrowing it to their type: how a string from outside
 * (a query, a header, a log record) is checked against a list of known names such as
 * `adminScopes` or an event-type list.
 */
export function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  const names: readonly string[] = values;
  return names.includes(value);
}
