// The doctor's checks of the team store (`--store` / LOADOUT_STORE_URL), one finding each: is it
// reachable, is its schema current, does this process hear other replicas' changes, and is
// LOADOUT_SECRET_KEY set and able to open the OAuth tokens stored with it. Looks only: the schema
// is not migrated and nothing is written.
import { errorMessage, isLoadoutError, type Logger } from '../shared/index.js';
import { SecretBox, parseStoreUrl, type FleetStore, type TeamStore } from '../store/index.js';
import type { Finding, StoreCheck } from './doctorChecks.js';
import { openCommandStore } from './program.js';

/** Check the store `storeUrl` names; `secretKey` is LOADOUT_SECRET_KEY as set. */
export async function checkStore(storeUrl: string, secretKey: string | undefined, logger: Logger): Promise<StoreCheck> {
  const finding = (rest: Omit<Finding, 'check' | 'subject'>): Finding => ({ check: 'store', subject: 'store', ...rest });
  const keyFinding = (rest: Omit<Finding, 'check' | 'subject'>): Finding => ({ check: 'store', subject: 'LOADOUT_SECRET_KEY', ...rest });
  let keyProblem: Finding | undefined;
  if (!secretKey)
    keyProblem = keyFinding({
      ok: false,
      message: 'not set: store mode seals OAuth tokens with it, and serve and the other commands refuse to start without it',
      fix: 'set LOADOUT_SECRET_KEY, the same on every replica (a new one: openssl rand -base64 32)',
    });
  else {
    try {
      new SecretBox(secretKey);
    } catch (error) {
      keyProblem = keyFinding({ ok: false, message: errorMessage(error), fix: 'set LOADOUT_SECRET_KEY to the key every replica uses' });
    }
  }
  const startedMs = performance.now();
  let store: FleetStore;
  try {
    // Listening, as a replica does, so the check sees whether changes would be heard.
    store = await openCommandStore(storeUrl, logger, { listen: true, migrate: false, secretKey: keyProblem ? 'unused' : 'optional' });
  } catch (error) {
    const masked = parseStoreUrl(storeUrl).masked;
    const findings = isLoadoutError(error, 'STORE_SCHEMA_NEWER')
      ? [
          finding({ ok: true, message: `${masked} reachable` }),
          finding({
            ok: false,
            message: errorMessage(error),
            fix: 'upgrade loadout on this machine to the version the other replicas run',
          }),
        ]
      : [
          finding({
            ok: false,
            message: errorMessage(error),
            fix: 'check the URL (--store or LOADOUT_STORE_URL), and that PostgreSQL runs there and accepts this user',
          }),
        ];
    return { findings: [...findings, keyProblem ?? keyFinding({ ok: true, message: 'set' })], usable: undefined };
  }
  const findings = [finding({ ok: true, message: `${store.description} reachable (${Math.round(performance.now() - startedMs)} ms)` })];
  let current = false;
  try {
    const schema = await store.fleet.schema();
    current = schema.pending.length === 0;
    findings.push(
      current
        ? finding({ ok: true, message: `schema at version ${schema.version}, up to date` })
        : finding({
            ok: false,
            message: `schema at version ${schema.version}; pending: ${schema.pending.join(', ')}`,
            fix: 'loadout store migrate (a replica applies them too when it starts)',
          }),
      store.listening
        ? finding({ ok: true, message: "listening: this process hears other replicas' changes" })
        : finding({
            ok: false,
            message: 'not listening: changes made through other replicas would not be heard',
            fix: 'check that the database user may LISTEN, and what sits between loadout and PostgreSQL (a pooler in transaction mode drops LISTEN)',
          }),
      // Behind, the tables the tokens live in may not be there yet.
      keyProblem ?? (current ? await tokensFinding(store, keyFinding) : keyFinding({ ok: true, message: 'set' })),
    );
    return { findings, usable: current ? store : undefined };
  } catch (error) {
    current = false;
    findings.push(
      finding({ ok: false, message: errorMessage(error), fix: 'run "loadout doctor" again; if it persists, check the PostgreSQL server' }),
    );
    return { findings, usable: undefined };
  } finally {
    if (!current) await store.close();
  }
}

// Set and usable: does it open the tokens stored with it? A token it cannot open is one OAuth server logged out.
async function tokensFinding(store: TeamStore, keyFinding: (rest: Omit<Finding, 'check' | 'subject'>) => Finding): Promise<Finding> {
  const records = await store.oauth.list();
  const unreadable = records.filter((record) => record.state === 'unreadable').map((record) => record.key);
  if (!unreadable.length)
    return keyFinding({
      ok: true,
      message: `set; opens the ${records.length} stored OAuth token record${records.length === 1 ? '' : 's'}`,
    });
  return keyFinding({
    ok: false,
    message: `set, but it does not open the stored tokens of ${unreadable.join(', ')}`,
    fix: `set the key they were stored with, or log in again (loadout auth ${unreadable[0]})`,
  });
}
