// Which texts of a server config are `${VAR}`-expanded at its start (doctor and masking share the list).
import { describe, expect, it } from 'vitest';
import { ServerConfigSchema } from './schema.js';
import { serverEnvTexts } from './envExpand.js';

describe('serverEnvTexts', () => {
  it('holds an OAuth client_secret where OAuth is used, and not where a header authorizes', () => {
    const oauth = { client_id: 'loadout', client_secret: '${SECRET}' };
    const viaOAuth = ServerConfigSchema.parse({ url: 'https://x.example/${HOST}', headers: { 'X-Key': '${KEY}' }, oauth });
    expect(serverEnvTexts(viaOAuth)).toEqual(['https://x.example/${HOST}', '${KEY}', '${SECRET}']);
    const viaHeader = ServerConfigSchema.parse({ url: 'https://x.example', headers: { Authorization: 'Bearer ${TOKEN}' }, oauth });
    expect(serverEnvTexts(viaHeader)).toEqual(['https://x.example', 'Bearer ${TOKEN}']);
  });

  it('holds a stdio server command, args, env and cwd', () => {
    const stdio = ServerConfigSchema.parse({ command: '${BIN}', args: ['--a', '${ARG}'], env: { K: '${V}' }, cwd: '${DIR}' });
    expect(serverEnvTexts(stdio)).toEqual(['${BIN}', '--a', '${ARG}', '${V}', '${DIR}']);
  });
});
