// Drives index.html in headless Chromium with a virtual authenticator (DevTools protocol,
// WebAuthn domain): signs in with an e-mail code, registers a passkey, reloads the page
// (forgetting the token) and signs in with the passkey alone. Run by
// scripts/passkey-browser-check.sh, which starts `langcamp serve` with
// PUBLIC_ORIGIN=http://localhost:$PAGE_PORT; this script serves the page on that port.
//
//   API_URL=http://localhost:PORT PAGE_PORT=PORT MAIL_DIR=... node check.mjs
//
// Exits 1 with "FAIL: <ceremony>: <why>" when a step fails; prints what it saw on success.
import { readFile, readdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const need = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const apiUrl = need('API_URL');
const pagePort = Number(need('PAGE_PORT'));
const mailDir = need('MAIL_DIR');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const email = 'passkey.student@example.com';
const origin = `http://localhost:${pagePort}`;

const say = (line) => console.log(`passkey-browser: ${line}`);
class Failure extends Error {}
const fail = (ceremony, why) => {
  throw new Failure(`${ceremony}: ${why}`);
};
const check = (ceremony, ok, why) => ok || fail(ceremony, why);

// The page, and nothing else, at PUBLIC_ORIGIN.
const html = await readFile(new URL('./index.html', import.meta.url));
const server = createServer((req, res) => {
  if (req.method === 'GET' && new URL(req.url, origin).pathname === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(html);
  } else {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found\n');
  }
});
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(pagePort, '127.0.0.1', resolve);
});

// The sign-in code of the newest mail to `email`, waited for (the mail worker writes it).
async function signInCode() {
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline) {
    const files = (await readdir(mailDir).catch(() => [])).filter((f) => f.endsWith('.eml')).sort();
    for (const file of files.reverse()) {
      const text = await readFile(join(mailDir, file), 'utf8');
      const code = text.includes(email) && text.match(/sign-in code is (\d{6})/);
      if (code) return code[1];
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

// CDP gives credential ids in standard base64, the browser's JSON in base64url.
const base64url = (b64) => b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

let browser;
let page;
// Clicks a button of the page and waits for its outcome: the JSON in #result, or a failure.
async function press(ceremony, id) {
  await page.evaluate(() => {
    document.body.dataset.state = 'clicked';
  });
  await page.click(`#${id}`);
  await page
    .waitForFunction(() => ['done', 'failed'].includes(document.body.dataset.state), null, { timeout: 20000 })
    .catch(() => fail(ceremony, `the page did not finish "${id}" within 20 s`));
  const state = await page.evaluate(() => document.body.dataset.state);
  const result = JSON.parse(await page.textContent('#result'));
  check(ceremony, state === 'done', result.error);
  return result;
}

let status = 0;
const started = Date.now();
try {
  // Playwright's defaults already keep Chromium off the network in the background and
  // without a sandbox (CI runs as root).
  browser = await chromium.launch({ executablePath: chromiumPath });
  say(`Chromium ${browser.version()} started`);
  page = await browser.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));

  // The virtual authenticator: a platform authenticator (internal transport) that keeps
  // resident keys and verifies the user, and says yes without anyone touching it.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  const credentials = async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;

  await page.goto(`${origin}/?api=${encodeURIComponent(apiUrl)}`);
  check('page', await page.evaluate(() => window.isSecureContext), `${origin} is not a secure context`);

  // Signed in with an e-mail code first: a passkey is added to an account.
  await page.fill('#email', email);
  await press('e-mail sign-in', 'send-code');
  const code = await signInCode();
  check('e-mail sign-in', code, `no mail with a sign-in code for ${email} in ${mailDir}`);
  await page.fill('#code', code);
  const otp = await press('e-mail sign-in', 'verify-code');
  check('e-mail sign-in', otp.aal === 1 && otp.secondFactor === 'none', `expected aal 1 and secondFactor "none", got ${JSON.stringify(otp)}`);
  say(`signed in with the e-mail code as ${otp.email} (aal ${otp.aal})`);

  // Registration.
  const registered = await press('registration', 'add-passkey');
  check('registration', registered.status === 201, `POST /me/passkeys answered ${registered.status}, not 201`);
  check('registration', registered.aal === 2, `aal ${registered.aal} after adding a passkey, not 2`);
  check('registration', registered.factorType === 'passkey', `the new factor is a ${registered.factorType}`);
  const afterCreate = await credentials();
  check('registration', afterCreate.length === 1, `the authenticator holds ${afterCreate.length} credentials, not 1`);
  const [created] = afterCreate;
  check('registration', created.isResidentCredential, 'the credential is not a resident (discoverable) key');
  check('registration', created.rpId === 'localhost', `the credential's RP id is ${created.rpId}, not localhost`);
  check('registration', base64url(created.credentialId) === registered.credentialId, 'the authenticator holds another credential than the page sent');
  say(
    `registration: 201, aal ${registered.aal}, ${registered.recoveryCodes} recovery codes; ` +
      `the authenticator holds ${afterCreate.length} resident credential for RP id ${created.rpId}, signCount ${created.signCount}`,
  );

  // Sign-in with the passkey alone: the reload forgets the e-mail sign-in's token.
  await page.reload();
  const signedIn = await press('sign-in', 'passkey-sign-in');
  check('sign-in', signedIn.status === 200, `POST /auth/passkey/verify answered ${signedIn.status}, not 200`);
  check('sign-in', signedIn.aal === 2, `aal ${signedIn.aal} after a passkey sign-in, not 2`);
  check('sign-in', signedIn.email === email, `signed in as ${signedIn.email}, not ${email}`);
  check('sign-in', signedIn.meEmail === email, `GET /me with the new token answered ${signedIn.meEmail}`);
  check('sign-in', signedIn.passkeys === 1, `/me/factors lists ${signedIn.passkeys} passkeys, not 1`);
  check('sign-in', signedIn.credentialId === registered.credentialId, 'the browser signed with another credential');
  const afterGet = await credentials();
  check('sign-in', afterGet.length === 1, `the authenticator holds ${afterGet.length} credentials after the sign-in`);
  check('sign-in', afterGet[0].signCount > created.signCount, `signCount did not move (${created.signCount} -> ${afterGet[0].signCount})`);
  say(
    `sign-in: 200, aal ${signedIn.aal}, as ${signedIn.email} (GET /me agrees), ` +
      `signCount ${created.signCount} -> ${afterGet[0].signCount}`,
  );
  check('page', pageErrors.length === 0, `the page threw: ${pageErrors.join('; ')}`);
  say(`both ceremonies passed in Chromium in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (e) {
  console.error(`passkey-browser: FAIL: ${e instanceof Failure ? e.message : `browser: ${e.stack || e}`}`);
  status = 1;
} finally {
  await browser?.close().catch(() => {});
  server.close();
}
process.exit(status);
