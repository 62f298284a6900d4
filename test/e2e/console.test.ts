import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { kafkaTestEnvironment } from '@tessera/feed/testing';
import { startTessera, type TesseraProcess } from '../support/tessera-process.js';
import { until } from '../support/until.js';

/**
 * The admin console in a real browser (Debian's Chromium, driven by playwright-core) against a
 * real `tessera start`, used as a person would: sign in with an admin token, create an account and
 * copy its key once, find the family its token made and revoke it (the token is then refused at
 * its protected route), search the audit trail, sign out; a session cookie changes nothing without
 * its CSRF token, and revoking the admin token ends the session. axe-core checks every page.
 */
const chromiumPath = '/usr/bin/chromium';
const hasChromium = existsSync(chromiumPath);
if (!hasChromium) {
  const message = `SKIPPING the admin console e2e: no browser at ${chromiumPath} (apt-get install -y chromium). The console is NOT checked in a browser in this run. Set TESSERA_REQUIRE_CHROMIUM=1 to fail instead.`;
  if (process.env.TESSERA_REQUIRE_CHROMIUM === '1') throw new Error(message);
  console.warn(`\n${'!'.repeat(78)}\n!! ${message}\n${'!'.repeat(78)}\n`);
}

// With a broker, the revocation made in the console is also followed to a Kafka-fed verifier.
const { brokers } = kafkaTestEnvironment('the admin console: a revocation reaching a Kafka-fed verifier');

const repositoryRoot = resolve(import.meta.dirname, '..', '..');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** Screenshots for docs/console.md, written only when asked (TESSERA_CONSOLE_SCREENSHOTS=1): a test run leaves the tree as it was. */
const screenshots = process.env.TESSERA_CONSOLE_SCREENSHOTS === '1' ? join(repositoryRoot, 'docs', 'console') : undefined;
const everyScope = ['accounts:read', 'accounts:write', 'tokens:revoke', 'audit:read', 'ssf:receivers'];
const cookieName = '__Host-tessera-console';

let server: TesseraProcess;
/** What the next prompt() of the page is answered. */
let promptAnswer = '';
/** A `tessera verifier` fed from Kafka by the all-in-one's relay; undefined without a broker. */
let verifier: TesseraProcess | undefined;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let consoleUrl = '';
/**
 * What the page's globals are, for the callbacks page.evaluate runs in the browser: this file is
 * type-checked with Node's types, not the DOM's. The callbacks cast globalThis to it.
 */
interface InThePage {
  readonly document: { readonly activeElement: { readonly id: string; readonly textContent: string | null; getAttribute(name: string): string | null } | null };
  readonly localStorage: Record<string, string>;
  readonly sessionStorage: Record<string, string>;
  readonly navigator: { readonly clipboard: { readText(): Promise<string> } };
  /** axe-core's global, once its script has been evaluated in the page. */
  readonly axe: { run(context: object): Promise<{ passes: unknown[]; violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> };
}

/** What the browser's console said about the Content Security Policy: a page that needed an inline script or style would be here. */
const cspViolations: string[] = [];

async function createAdminToken(name: string, scopes: readonly string[]): Promise<{ id: string; admin_token: string }> {
  const { stdout } = await server.tessera(['admin-tokens', 'create', '--name', name, ...scopes.flatMap((scope) => ['--scope', scope]), '--json']);
  // The CLI's --json answer: exactly these two fields (docs/audit.md).
  const created = JSON.parse(stdout) as { id: string; admin_token: string };
  // The server follows the log: the token works within a poll of it.
  const signIn = () => server.adminRequest('/console/session', { method: 'POST', headers: { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' }, body: JSON.stringify({ admin_token: created.admin_token }) });
  await until(signIn, `admin token ${name} accepted`, { done: (answer) => answer.status === 200, timeoutMs: 5_000 });
  return created;
}

/** axe-core run in the page as it stands: no serious or critical finding. Evaluated through DevTools, which the page's CSP does not govern. */
async function expectAccessible(name: string): Promise<void> {
  await page.evaluate(axeSource);
  const findings = await page.evaluate(async () => {
    const inPage = globalThis as unknown as InThePage;
    const result = await inPage.axe.run(inPage.document);
    return {
      passed: result.passes.length,
      violations: result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.map((node) => JSON.stringify(node.target)) })),
    };
  });
  // Rules that passed: axe looked at this page, rather than at nothing.
  expect(findings.passed, name).toBeGreaterThan(10);
  const serious = findings.violations.filter((finding) => finding.impact === 'serious' || finding.impact === 'critical');
  expect(serious, `${name}: ${JSON.stringify(serious, null, 2)}`).toEqual([]);
}

async function screenshot(name: string): Promise<void> {
  if (screenshots === undefined) return;
  mkdirSync(screenshots, { recursive: true });
  // The key shown once is masked: a screenshot in the repository holds no secret, even a test's.
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true, mask: [page.locator('#shown-secret')] });
}

async function signIn(adminToken: string): Promise<void> {
  await page.goto(consoleUrl);
  await page.getByLabel('Admin token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.locator('#who').textContent()).toContain('Signed in as');
}

describe.skipIf(!hasChromium)('the admin console in a browser', () => {
  let admin: { id: string; admin_token: string };
  let account: { account_id: string; api_login_id: string; transaction_key: string };
  let accessToken = '';
  let familyId = '';
  /** Epoch ms by which the family was issued (its TokenIssued is no later). */
  let issuedBy = 0;
  /** The whole second after issuedBy: the access-at picker takes seconds, and this instant falls between issue and revocation. */
  const usableAt = () => Math.ceil(issuedBy / 1000) * 1000;

  beforeAll(async () => {
    // A topic of this run's own: the broker may be shared with other suites.
    const topic = `tessera.revocations.console.${process.pid}`;
    server = await startTessera(brokers ? { TESSERA_KAFKA_BROKERS: brokers, TESSERA_KAFKA_TOPIC: topic } : {});
    if (brokers) {
      verifier = await startTessera(
        {
          TESSERA_KAFKA_BROKERS: brokers,
          TESSERA_KAFKA_TOPIC: topic,
          TESSERA_VERIFIER_SOURCE: 'kafka',
          TESSERA_ISSUER_JWKS_URL: `${server.baseUrl}/.well-known/jwks.json`,
          NODE_EXTRA_CA_CERTS: join(server.dataDir, 'tls', 'self-signed.crt'),
        },
        { command: 'verifier' },
      );
    }
    consoleUrl = `${server.adminUrl!}/console/`;
    admin = await createAdminToken('console e2e', everyScope);
    // Root in a container: Chromium's sandbox needs user namespaces it may not have.
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    // The admin listener's certificate is the data folder's self-signed one.
    context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.adminUrl! });
    page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    // Confirmations are accepted; a prompt gets the answer the test set for it.
    page.on('dialog', (dialog) => void (dialog.type() === 'prompt' ? dialog.accept(promptAnswer) : dialog.accept()));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await verifier?.stop();
    await server?.stop();
  });

  it('signs in with an admin token: a session cookie HttpOnly, Secure, SameSite=Strict that holds no token, and nothing in the page storage', async () => {
    await page.goto(consoleUrl);
    await expectAccessible('sign-in');
    await screenshot('sign-in');
    // By keyboard alone: the token field has the focus, Enter signs in, and the page's heading takes the focus.
    const focused = () => page.evaluate(() => {
      const active = (globalThis as unknown as InThePage).document.activeElement;
      return { id: active?.id, text: active?.textContent, name: active?.getAttribute('name') };
    });
    expect((await focused()).id).toBe(await page.getByLabel('Admin token').getAttribute('id'));
    await page.keyboard.type(admin.admin_token);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#who').textContent()).toContain('Signed in as');
    await expect.poll(async () => (await focused()).text).toBe('Accounts');
    await page.keyboard.press('Tab');
    expect((await focused()).name).toBe('q');
    const [cookie] = (await context.cookies()).filter((each) => each.name === cookieName);
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/' });
    expect(cookie!.value).not.toContain(admin.admin_token);
    expect(cookie!.expires * 1000 - Date.now()).toBeGreaterThan(7.9 * 3600_000);
    const stored = await page.evaluate(() => {
      const inPage = globalThis as unknown as InThePage;
      return JSON.stringify({ local: { ...inPage.localStorage }, session: { ...inPage.sessionStorage } });
    });
    expect(stored).toBe('{"local":{},"session":{}}');
    expect(await page.content()).not.toContain(admin.admin_token);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Accounts');
    await expectAccessible('accounts');
  });

  it('creates an account and shows its key once, with a copy button; the copied key gets a token', async () => {
    await page.getByLabel('Account name').fill('Console e2e shop');
    await page.getByLabel('Permissions').fill('transaction:charge');
    await page.getByRole('button', { name: 'Create account' }).click();
    const panel = page.locator('.secret-panel');
    await panel.waitFor();
    await page.getByRole('button', { name: 'Copy transaction key' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toBe('Transaction key copied.');
    const copied = await page.evaluate(() => (globalThis as unknown as InThePage).navigator.clipboard.readText());
    expect(copied).toMatch(/^tsk_/);
    expect(await page.locator('#shown-secret').inputValue()).toBe(copied);
    const [accountId, apiLoginId] = await panel.locator('dd code').allTextContents();
    account = { account_id: accountId!, api_login_id: apiLoginId!, transaction_key: copied };
    await expectAccessible('accounts with a new key');
    await screenshot('accounts');
    await page.getByRole('button', { name: 'Stored it: hide' }).click();
    expect(await page.locator('.secret-panel').count()).toBe(0);
    expect(await page.content()).not.toContain(copied);
    expect(await page.getByRole('row', { name: /Console e2e shop/ }).count()).toBe(1);
    // Searched by part of its API Login ID, in another case: the one account, and no other row.
    await page.getByLabel('Search', { exact: true }).fill(account.api_login_id.slice(4).toUpperCase());
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.locator('#status').textContent()).toBe(`Accounts matching ${account.api_login_id.slice(4).toUpperCase()}.`);
    expect(await page.locator('#account-results tbody tr').count()).toBe(1);
    expect(await page.getByRole('row', { name: /Console e2e shop/ }).count()).toBe(1);
    await expectAccessible('accounts searched');

    const issued = await server.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: account.transaction_key });
    expect(issued.status).toBe(200);
    accessToken = String(issued.json().token);
    issuedBy = Date.now();
    expect(accessToken.split('.')).toHaveLength(3);
    expect((await server.postJson('/v5/Transaction/charge', {}, { authorization: `Bearer ${accessToken}` })).status).toBe(200);
  });

  it("finds the account's family and revokes it: its access token is refused at the protected route", async () => {
    const chargeAtVerifier = async () => (await verifier!.postJson('/v5/Transaction/charge', {}, { authorization: `Bearer ${accessToken}` })).status;
    if (verifier) expect(await chargeAtVerifier()).toBe(200);
    await page.getByRole('link', { name: 'Families of Console e2e shop' }).click();
    const rows = page.getByRole('table', { name: `Live token families of ${account.account_id}` }).locator('tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    familyId = (await rows.first().locator('code').textContent())!;
    expect(await rows.first().locator('td').nth(1).textContent()).toBe('0');
    await expectAccessible('families');
    await screenshot('families');
    // Revoked a whole second after the instant the access-at question below asks about: the log dates a revocation in whole seconds.
    await until(() => Date.now(), 'the clock a second past the instant access-at asks about', { done: (now) => now > usableAt() + 1_100, everyMs: 50 });
    await page.getByRole('button', { name: `Revoke family ${familyId}` }).click();
    await expect.poll(() => page.locator('#status').textContent()).toBe(`Family ${familyId} revoked.`);
    await expect.poll(() => page.getByText('No live token family.').count()).toBe(1);
    expect((await server.postJson('/v5/Transaction/charge', {}, { authorization: `Bearer ${accessToken}` })).status).toBe(401);
    // Through the relay and Kafka: another process refuses it too, within seconds.
    if (verifier) await until(chargeAtVerifier, 'the Kafka-fed verifier refuses the revoked token', { done: (status) => status === 401, timeoutMs: 10_000 });
    else console.warn('the admin console e2e: no Kafka broker, so the revocation is not followed to a Kafka-fed verifier in this run');
  });

  it('searches the audit trail: the family issued, then revoked by this admin token', async () => {
    await page.getByRole('link', { name: 'Audit trail' }).click();
    await page.getByLabel('Family ID').fill(familyId);
    await page.getByRole('button', { name: 'Show events' }).click();
    const items = page.locator('ol.timeline li');
    await expect.poll(() => items.count()).toBe(2);
    const texts = await items.allTextContents();
    expect(texts[0]).toContain('TokenIssued');
    expect(texts[1]).toContain('TokenRevoked');
    expect(texts[1]).toContain(`by admin:${admin.id}`);
    await expectAccessible('audit');
    await screenshot('audit');
  });

  it("answers who held a usable token at an instant: the family, at a time before its revocation", async () => {
    const at = new Date(usableAt());
    await page.getByLabel('Account ID').nth(1).fill(account.account_id);
    // datetime-local takes the user's local time, to the second.
    const local = new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
    await page.getByLabel('At (your local time)').fill(local);
    await page.getByRole('button', { name: 'Show access' }).click();
    const rows = page.locator('#access-at-answer tbody tr');
    await rows.first().waitFor({ timeout: 10_000 }).catch(async (error: unknown) => {
      throw new Error(`no access-at answer; the page says: ${await page.locator('#status').textContent()} ${await page.locator('#access-at-answer').textContent()}`, { cause: error });
    });
    expect(await rows.count()).toBe(1);
    expect(await rows.first().locator('code').textContent()).toBe(familyId);
    await expectAccessible('audit with access-at');
  });

  it("rotates the account's key (the new one shown once, the old one refused), sets its permissions, disables and enables it", async () => {
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByRole('button', { name: 'Rotate key of Console e2e shop' }).click();
    await page.locator('.secret-panel').waitFor();
    const rotated = await page.locator('#shown-secret').inputValue();
    expect(rotated).toMatch(/^tsk_/);
    expect(rotated).not.toBe(account.transaction_key);
    await page.getByRole('button', { name: 'Stored it: hide' }).click();
    const tokenWith = async (transactionKey: string) => (await server.postJson('/v5/Authorization/get-oauth-token', { api_login_id: account.api_login_id, transaction_key: transactionKey })).status;
    expect(await tokenWith(account.transaction_key)).toBe(401);
    expect(await tokenWith(rotated)).toBe(200);

    promptAnswer = 'transaction:charge reports:read';
    await page.getByRole('button', { name: 'Permissions of Console e2e shop' }).click();
    const row = page.getByRole('row', { name: /Console e2e shop/ });
    await expect.poll(() => row.locator('td').nth(3).textContent()).toBe('transaction:charge reports:read');

    await page.getByRole('button', { name: 'Disable Console e2e shop' }).click();
    await expect.poll(() => row.locator('td').nth(4).textContent()).toBe('disabled');
    expect(await tokenWith(rotated)).toBe(401);
    await page.getByRole('button', { name: 'Enable Console e2e shop' }).click();
    await expect.poll(() => row.locator('td').nth(4).textContent()).toBe('enabled');
    expect(await tokenWith(rotated)).toBe(200);
  });

  it('shows Shared Signals receivers and their streams, and the archive and signing keys', async () => {
    const receiver = await server.adminRequest('/admin/v1/ssf/receivers', { method: 'POST', headers: { authorization: `Bearer ${admin.admin_token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Partner SIEM' }) });
    expect(receiver.status).toBe(201);
    // The receiver makes a polled stream on the public listener, with its own token.
    const receiverToken = String(receiver.json().token);
    await until(
      () => server.postJson('/ssf/streams', { delivery: { method: 'urn:ietf:rfc:8936' } }, { authorization: `Bearer ${receiverToken}` }),
      'a stream of the new receiver',
      { done: (answer) => answer.status === 201, timeoutMs: 5_000 },
    );
    await page.getByRole('link', { name: 'Shared Signals' }).click();
    const streams = page.getByRole('table', { name: 'Streams of Partner SIEM' }).locator('tbody tr');
    // Delivery starts (this process takes the delivery lease) once a stream exists: until then the page says it is not delivered here.
    const { answer: cells } = await until(
      async () => {
        await page.getByRole('button', { name: 'Streams of Partner SIEM' }).click();
        await streams.first().waitFor();
        return streams.first().locator('td').allTextContents();
      },
      'the stream delivered by this process',
      { done: (texts) => texts[3] === '0', timeoutMs: 10_000, everyMs: 250 },
    );
    expect(await streams.count()).toBe(1);
    expect(cells.slice(1, 4)).toEqual(['enabled', 'poll', '0']);
    await expectAccessible('signals');
    await screenshot('signals');
    await page.getByRole('link', { name: 'Archive and keys' }).click();
    const keys = page.getByRole('table', { name: 'Token signing keys' }).locator('tbody tr');
    await keys.first().waitFor();
    expect(await keys.first().locator('td').nth(2).textContent()).toBe('yes');
    await expectAccessible('archive');
    await screenshot('archive');
  });

  it('refuses a change made with the session cookie alone (403), in the page and from outside it', async () => {
    const before = await server.adminRequest('/admin/v1/accounts?name=Forged', { headers: { authorization: `Bearer ${admin.admin_token}` } });
    const inPage = await page.evaluate(async () => {
      const answer = await fetch('/admin/v1/accounts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Forged', permissions: [] }) });
      return answer.status;
    });
    expect(inPage).toBe(403);
    const [cookie] = (await context.cookies()).filter((each) => each.name === cookieName);
    const outside = await server.adminRequest('/admin/v1/accounts', { method: 'POST', headers: { cookie: `${cookieName}=${cookie!.value}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Forged', permissions: [] }) });
    expect(outside.status).toBe(403);
    const after = await server.adminRequest('/admin/v1/accounts?name=Forged', { headers: { authorization: `Bearer ${admin.admin_token}` } });
    expect(after.json().accounts).toEqual(before.json().accounts);
    expect(cspViolations).toEqual([]);
  });

  it('signs out: the cookie is gone and the sign-in page is back', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
    expect((await context.cookies()).filter((each) => each.name === cookieName)).toEqual([]);
    await page.reload();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
  });

  it('shows a page its admin token has no scope for as not allowed', async () => {
    const auditor = await createAdminToken('console auditor', ['audit:read']);
    await signIn(auditor.admin_token);
    expect(await page.getByText('Not allowed: this admin token lacks the scope accounts:read.').count()).toBe(1);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
  });

  it('ends the session at once when its admin token is revoked', async () => {
    const doomed = await createAdminToken('console doomed', ['accounts:read']);
    await signIn(doomed.admin_token);
    await server.tessera(['admin-tokens', 'revoke', '--id', doomed.id]);
    // The next thing the user does (a search) meets the revocation, once the server has read it from the log.
    const heading = () => page.getByRole('heading', { level: 1 }).textContent();
    await until(
      async () => {
        if ((await heading()) !== 'Sign in') await page.getByRole('button', { name: 'Search' }).click({ timeout: 1_000 });
        return heading();
      },
      'the console back at sign-in after its admin token was revoked',
      { done: (text) => text === 'Sign in', timeoutMs: 10_000, everyMs: 200 },
    );
    expect(await page.getByRole('alert').textContent()).toContain('revoked or expired');
    // A reload says so too, once: the server clears a session that is over.
    await page.reload();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('revoked or expired');
    expect((await context.cookies()).filter((each) => each.name === cookieName)).toEqual([]);
    await page.reload();
    await expect.poll(() => heading()).toBe('Sign in');
    expect(await page.getByRole('alert').count()).toBe(0);
  });
});
