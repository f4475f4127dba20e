// The calls wing's door (CONTRIBUTING.md, Layers and code): the router, the session's intake,
// forwarding, tasks and the shapes of requests, as the rest of the gateway uses them.
export { CallRouter } from './callRouter.js';
export { ClientIntake, DirectCalls } from './clientIntake.js';
export { clientRequestOf, forward, type RequestExtra } from './forward.js';
export { TASK_CAPABILITIES, serveTasks } from './taskHandlers.js';
export { PassthroughCallServer } from './passthroughCall.js';
export { isPlainModernCall, requestProblem } from './requestShape.js';
export { RATE_LIMITED_CODE, isRateLimitError } from './callAudit.js';
