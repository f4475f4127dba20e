// Literal secrets in the servers being imported (`setup`, `init`, a first `serve`): moved into
// secrets.env unless the user keeps them (--keep-secrets), and the one line that says which.
import { moveLiteralSecrets, readSecretsFile, type LoadoutPaths, type SecretsMove } from '../config/index.js';

/** The servers as servers.yaml gets them, the values secrets.env gains, and whether the user kept them literal. */
export interface SecretsPlan extends SecretsMove {
  keep: boolean;
  /** Every literal secret value found, moved or kept: hidden wherever a diff or listing would show it. */
  found: string[];
}

/** Take the literal secrets out of `servers`, or with `keep` only list them. */
export async function planSecrets(
  paths: LoadoutPaths,
  servers: Record<string, Record<string, unknown>>,
  keep: boolean,
): Promise<SecretsPlan> {
  // A name secrets.env or the environment holds with another value is not reused.
  const move = moveLiteralSecrets(servers, [await readSecretsFile(paths.secretsFile), process.env]);
  const found = Object.values(move.values);
  return keep ? { servers, values: {}, moved: move.moved, keep, found } : { ...move, keep, found };
}

/** What happens (`Moving`) or happened (`Moved`) to the literal secrets; nothing when there were none. */
export function describeSecrets(plan: SecretsPlan, secretsFile: string, verb: 'Moving' | 'Moved'): string[] {
  const count = plan.moved.length;
  if (!count) return [];
  const noun = `${count} literal secret${count === 1 ? '' : 's'}`;
  const where = ({ server, field, key }: SecretsPlan['moved'][number]) => `${server} ${field} ${key}`;
  if (plan.keep) return [`servers.yaml keeps ${noun} (--keep-secrets): ${plan.moved.map(where).join(', ')}`];
  return [
    `${verb} ${noun} out of servers.yaml into ${secretsFile} (mode 0600): ${plan.moved.map((moved) => `${where(moved)} → \${${moved.variable}}`).join(', ')}`,
  ];
}
