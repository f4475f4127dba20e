// The `yaml` module, loaded on first use. A warm start reads servers.yaml through its parsed
// cache and needs no YAML parser, and loading one costs start-up time. `yaml` is CommonJS, so it
// can be required synchronously by the synchronous parsers that use it.
import { createRequire } from 'node:module';

type YamlModule = typeof import('yaml');

let loaded: YamlModule | undefined;

/** The `yaml` module (required on the first call). */
export function yamlModule(): YamlModule {
  loaded ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return loaded;
}
