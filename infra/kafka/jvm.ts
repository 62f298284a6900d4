import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { onPath } from './command-line.js';

/** True when this machine can run jars that `jars` holds or Maven can fetch: a JVM, and the jars cached or mvn. */
export function canRunJars(jars: string): boolean {
  return onPath('java') && (existsSync(join(jars, '.complete')) || onPath('mvn'));
}

/**
 * Copies the runtime dependencies of `pom` into `jars` once. Maven writes into a scratch folder
 * that is renamed into place, so a fetch cut short never looks complete and two concurrent
 * fetches cannot mix their files.
 */
export function fetchJarsOnce(pom: string, jars: string, what: string): string {
  if (existsSync(join(jars, '.complete'))) return jars;
  const cache = dirname(jars);
  mkdirSync(cache, { recursive: true });
  const scratch = mkdtempSync(join(cache, 'fetch-'));
  const result = spawnSync(
    'mvn',
    ['-B', '-q', '-f', pom, 'dependency:copy-dependencies', '-DincludeScope=runtime', `-DoutputDirectory=${join(scratch, 'jars')}`],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (result.status !== 0) {
    rmSync(scratch, { recursive: true, force: true });
    throw new Error(`mvn could not fetch ${what}:\n${result.stdout}\n${result.stderr}`);
  }
  writeFileSync(join(scratch, 'jars', '.complete'), `${new Date().toISOString()}\n`);
  try {
    renameSync(join(scratch, 'jars'), jars);
  } catch (error) {
    // Another fetch finished first: its jars are as good as these.
    if (!existsSync(join(jars, '.complete'))) throw error;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return jars;
}

/**
 * The JVM flags of a short-lived test process (a broker, MirrorMaker 2): C1 only and the serial
 * collector start faster and leave the second core of a small machine to the tests.
 */
export function testJvmArgs(jars: string, heapMb: number, log4jFile: string, ...systemProperties: string[]): string[] {
  return [
    `-Xmx${heapMb}m`,
    '-Xms64m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-XX:+ExitOnOutOfMemoryError',
    '-Djava.awt.headless=true',
    `-Dlog4j.configuration=file:${log4jFile}`,
    ...systemProperties,
    '-cp',
    `${jars}/*`,
  ];
}

/** log4j 1 settings that write every line to stdout (the process's log file) in `pattern`, then `more`. */
export function consoleLog4j(pattern: string, ...more: string[]): string {
  return [
    'log4j.rootLogger=INFO, stdout',
    'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
    'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
    `log4j.appender.stdout.layout.ConversionPattern=${pattern}`,
    ...more,
    '',
  ].join('\n');
}
