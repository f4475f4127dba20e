// The content wing's door: prompts, resources and completions, as a session serves them.
export { CONTENT_CAPABILITIES, isExposedPromptName, listenedResources, serveContent } from './contentHandlers.js';
