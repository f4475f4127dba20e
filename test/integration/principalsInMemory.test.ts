// What a gateway holds per principal is bounded (gateway.principals_in_memory): past the bound, the
// least recently used principal's view and equipped set are dropped, unless in use (a listen
// stream open); a dropped set is made again from its file, so the principal keeps what it equipped.
import { describe, expect, it, vi } from 'vitest';
import { issuedPrincipal, Policy, type Principal } from '../../src/identity/index.js';
import { fixture, nodeServer, useInProcessGateway, writeServersYaml } from '../helpers/gateway.js';

const principal = (subject: string): Principal => issuedPrincipal('https://idp.example', subject, ['eng']);
const scope = (who: Principal) => ({ kind: 'principal' as const, principal: who });

describe('per-principal state', () => {
  const sandbox = useInProcessGateway();

  it('keeps the recently used principals, drops an idle one past the bound, and keeps one with a listen stream', async () => {
    await writeServersYaml(
      sandbox.dirs.configDir,
      { echo: nodeServer(fixture('echo')) },
      { gateway: { principals_in_memory: 2 }, policy: { rules: [{ groups: ['eng'], servers: ['echo'] }] } },
    );
    const gateway = await sandbox.start();
    const [ann, bob, cat, dan] = ['ann', 'bob', 'cat', 'dan'].map(principal) as [Principal, Principal, Principal, Principal];
    await gateway.requestSession(scope(ann));
    const annBus = gateway.requestBus(scope(ann));
    const stopListening = annBus.subscribe(() => undefined);
    await gateway.requestSession(scope(bob));
    const bobBus = gateway.requestBus(scope(bob));
    await gateway.requestSession(scope(cat));
    // bob was idle and least recently used: gone; ann listens: kept past the bound.
    expect(gateway.requestBus(scope(ann))).toBe(annBus);
    expect(gateway.requestBus(scope(bob))).not.toBe(bobBus);
    stopListening();
    await gateway.requestSession(scope(dan));
    await gateway.requestSession(scope(cat));
    expect(gateway.requestBus(scope(ann))).not.toBe(annBus);
  });

  it("computes a principal's grants once per policy version, not on every read", async () => {
    await writeServersYaml(
      sandbox.dirs.configDir,
      { echo: nodeServer(fixture('echo')) },
      { policy: { rules: [{ groups: ['eng'], servers: ['echo'] }] } },
    );
    const gateway = await sandbox.start();
    await gateway.requestSession(scope(principal('ann')));
    const grantsFor = vi.spyOn(Policy.prototype, 'grantsFor');
    try {
      const server = await gateway.requestSession(scope(principal('ann')));
      expect(server).toBeDefined();
      expect(grantsFor).not.toHaveBeenCalled();
    } finally {
      grantsFor.mockRestore();
    }
  });
});
