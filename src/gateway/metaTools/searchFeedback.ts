// Tells the catalog's search what a session did after searching (equipped, built with or called
// tools), so the query's words are learned for those tools. Never fails the meta-tool: learning
// is a hint, and a write that fails is logged.
import { errorMessage } from '../../shared/index.js';
import type { GatewayContext } from '../context.js';

/** Credit the searcher's (MetaToolSession.searcher) last discover-all-tools query to `toolIds`; settles once recorded (at once when nothing is to be). */
export function creditSearch(
  gateway: Pick<GatewayContext, 'catalog' | 'logger'>,
  searcher: object,
  toolIds: readonly string[],
): Promise<void> {
  const recording = gateway.catalog.learning?.used(searcher, toolIds);
  return (
    recording?.catch((error: unknown) => {
      gateway.logger.warn({ mod: 'search', err: errorMessage(error) }, 'could not record learned search words');
    }) ?? Promise.resolve()
  );
}

/** A call of an equipped tool the last answer showed is use too: credited without a promise when there is nothing to record (the call path). */
export function creditCall(gateway: Pick<GatewayContext, 'catalog' | 'logger'>, searcher: object, toolId: string): void {
  if (gateway.catalog.learning?.expects(searcher, toolId)) void creditSearch(gateway, searcher, [toolId]);
}
