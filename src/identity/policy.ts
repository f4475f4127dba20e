// Who may see and use what: the `policy:` rules of servers.yaml applied to a principal. With no
// rule, everyone may use everything (a gateway of one person); with any rule, only what a rule
// grants to the principal is visible at all. The answer is a set of grants the catalog layer
// filters itself with; this file knows nothing of catalogs or sessions.
import type { PolicyRule, PolicySettings } from '../config/index.js';
import { RecentlyUsed } from '../shared/index.js';
import { issuedPrincipal, type Principal } from './principal.js';

/** What one principal may see and use. */
export interface Grants {
  tool(server: string, tool: string): boolean;
  prompt(server: string, prompt: string): boolean;
  resources(server: string): boolean;
  /** Whether anything of `server` is granted (its name may be shown). */
  server(server: string): boolean;
  /** Whether all of `server` is granted (its own words, which may name any of its tools, may be shown). */
  wholeServer(server: string): boolean;
  /** Whether a rule grants the saved toolset `name` (whoever owns it). */
  toolset(name: string): boolean;
}

/** The rules of one version of `policy:`. */
export class Policy {
  readonly #rules: readonly PolicyRule[];
  readonly #local: Principal;
  // Principals with the same subject and groups get the same grants object, so views built from it are shared.
  readonly #grants: RecentlyUsed<string, Grants>;

  /** `principalsInMemory`: how many principals' grants are kept (one object per subject and groups). */
  constructor(settings: PolicySettings, principalsInMemory = 1000) {
    this.#rules = settings.rules;
    this.#grants = new RecentlyUsed(principalsInMemory);
    this.#local = { ...issuedPrincipal('local', settings.local.subject, settings.local.groups), id: 'local' };
  }

  /** Whether any rule exists (else nothing is filtered). */
  get restricts(): boolean {
    return this.#rules.length > 0;
  }

  /** The caller where no token says who it is: stdio, or HTTP without credentials. */
  get localPrincipal(): Principal {
    return this.#local;
  }

  /** The grants of `principal`; undefined when the policy has no rule (everything is granted). */
  grantsFor(principal: Principal): Grants | undefined {
    if (!this.restricts) return undefined;
    const who = principal.id === 'local' ? this.#local : principal;
    const key = JSON.stringify([who.subject, [...who.groups].sort()]);
    let grants = this.#grants.get(key);
    if (!grants) {
      grants = grantsOf(this.#rules.filter((rule) => appliesTo(rule, who)));
      this.#grants.set(key, grants);
    }
    return grants;
  }
}

function appliesTo(rule: PolicyRule, principal: Principal): boolean {
  return rule.everyone || rule.subjects.includes(principal.subject) || rule.groups.some((group) => principal.groups.includes(group));
}

function grantsOf(rules: readonly PolicyRule[]): Grants {
  const servers = new Set(rules.flatMap((rule) => rule.servers));
  const tools = new Set(rules.flatMap((rule) => rule.tools));
  const prompts = new Set(rules.flatMap((rule) => rule.prompts));
  const resources = new Set(rules.flatMap((rule) => rule.resources));
  const toolsets = new Set(rules.flatMap((rule) => rule.toolsets));
  const named = new Set([...servers, ...resources, ...[...tools, ...prompts].map((id) => id.slice(0, id.indexOf('.')))]);
  return {
    tool: (server, tool) => servers.has(server) || tools.has(`${server}.${tool}`),
    prompt: (server, prompt) => servers.has(server) || prompts.has(`${server}.${prompt}`),
    resources: (server) => servers.has(server) || resources.has(server),
    server: (server) => named.has(server),
    wholeServer: (server) => servers.has(server),
    toolset: (name) => toolsets.has(name),
  };
}
