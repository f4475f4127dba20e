// Tells the catalog's search what a session did after searching (equipped, built with or called
// tools), so the query's words are learned for those tools. Never fails the meta-tool: learning
// is a hint, and a write that fails is logged.
import { errorMessage } from '../../shared/index.js';
import type { GatewayContext } from '../context.js';

/** Credit the session's last discover-all-tools query to `toolIds`. */
export async function creditSearch(gateway: GatewayContext, session: object, toolIds: readonly string[]): Promise<void> {
  try {
    await gateway.catalog.learning?.used(session, toolIds);
  } catch (error) {
    gateway.logger.warn({ mod: 'search', err: errorMessage(error) }, 'could not record learned search words');
  }
}
