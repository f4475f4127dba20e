// The `sandbox:` entry of a stdio server and `gateway.sandbox`, read once into one shape: a
// server's sandbox is `false` (none) or its policy, what it may not read, where it may write and
// which hosts it may reach; `true` is the policy with nothing added. The defaults every policy
// carries (the key folders, the server's own temp dir) are the downstream layer's, which spawns it.
import * as z from 'zod';
import { fileObject } from './fileObject.js';

// A host as the sandbox runtime's proxy matches it: a name, `*.name`, or an IP literal, with an
// optional `:port`. Checked here so a typo fails when servers.yaml is read, not at the server's start.
const ReachableHostSchema = z
  .string()
  .regex(
    /^(\*\.)?([A-Za-z0-9-]+\.)*[A-Za-z0-9-]+(:\d{1,5})?$|^\[[0-9a-fA-F:.]+\](:\d{1,5})?$/,
    'a host the sandbox may reach is a name (api.example.com, *.example.com) or an address, optionally with :PORT, without scheme or path',
  );

const SandboxPolicySchema = fileObject({
  filesystem: fileObject({
    /** Read-denied on top of the defaults (`~` is the user's home). */
    deny_read: z.array(z.string().min(1)).default([]),
    /** The only places it may write, besides its own temp dir and the npx/uvx caches. */
    write: z.array(z.string().min(1)).default([]),
  }).prefault({}),
  network: fileObject({
    /** The hosts it may reach, through the sandbox's proxy; `[]` = none. Absent: the network is open. */
    allow: z.array(ReachableHostSchema).optional(),
  }).prefault({}),
});
export type SandboxPolicy = z.infer<typeof SandboxPolicySchema>;

/**
 * A server's `sandbox:` as written: `true` (the defaults), `false` (none, even under
 * `gateway.sandbox: true`), or a policy. Read as `false` or a policy; left out, it stays undefined
 * until the file's `gateway.sandbox` decides (`withGatewaySandbox`).
 */
export const ServerSandboxSchema = z
  .union([z.boolean(), SandboxPolicySchema])
  .transform((entry): SandboxPolicy | false => (entry === true ? SandboxPolicySchema.parse({}) : entry));

/** Every stdio server of a parsed servers.yaml with its sandbox decided: its own entry, else `gateway.sandbox`. */
export function withGatewaySandbox<Servers extends Record<string, { type: string; sandbox?: SandboxPolicy | false }>>(
  servers: Servers,
  sandboxByDefault: boolean,
): Servers {
  const decided = Object.entries(servers).map(([name, server]) => {
    if (server.type !== 'stdio' || server.sandbox !== undefined) return [name, server] as const;
    return [name, { ...server, sandbox: sandboxByDefault ? SandboxPolicySchema.parse({}) : false }] as const;
  });
  return Object.fromEntries(decided) as Servers;
}

/** The sandbox a server runs in, or undefined when it runs without one (every HTTP/SSE server: not a process of loadout's). */
export function sandboxOf(server: { type: string; sandbox?: SandboxPolicy | false }): SandboxPolicy | undefined {
  return server.type === 'stdio' && server.sandbox ? server.sandbox : undefined;
}

/** A server's sandbox in a few words, as `status` and `doctor` show it: "-" for an HTTP/SSE server, which has none to have. */
export function sandboxText(server: { type: string; sandbox?: SandboxPolicy | false }): string {
  if (server.type !== 'stdio') return '-';
  const policy = sandboxOf(server);
  if (!policy) return 'no';
  const allow = policy.network.allow;
  return allow === undefined ? 'yes, network open' : allow.length === 0 ? 'yes, no network' : `yes, network: ${allow.join(', ')}`;
}
