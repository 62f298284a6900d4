/** Human text by default, one JSON object with --json: scripts parse the latter. */
export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}
