import { describe, expect, it } from 'vitest';
import { Cancellation } from './cancellation.js';

describe('Cancellation', () => {
  it('tells each listener once, with the reason, and forgets a listener that stopped', () => {
    const cancellation = new Cancellation();
    const heard: unknown[] = [];
    cancellation.onCancel((reason) => heard.push(['first', reason]));
    const stop = cancellation.onCancel((reason) => heard.push(['second', reason]));
    stop();
    cancellation.cancel('escape');
    cancellation.cancel('again');
    expect(heard).toEqual([['first', 'escape']]);
    expect(cancellation).toMatchObject({ cancelled: true, reason: 'escape' });
  });

  it('makes an AbortSignal only on request, aborted before or after the cancel', () => {
    const early = new Cancellation();
    const signal = early.signal;
    expect(signal.aborted).toBe(false);
    early.cancel('later');
    expect(signal.reason).toBe('later');
    const late = new Cancellation();
    late.cancel('before');
    expect(late.signal.aborted).toBe(true);
    expect(late.signal.reason).toBe('before');
  });

  it('follows an AbortSignal, already aborted or aborted later', () => {
    const controller = new AbortController();
    const following = Cancellation.fromSignal(controller.signal);
    expect(following.cancelled).toBe(false);
    controller.abort('gone');
    expect(following.reason).toBe('gone');
    expect(Cancellation.fromSignal(AbortSignal.abort('at once')).reason).toBe('at once');
  });
});
