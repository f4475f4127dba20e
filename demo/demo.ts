// `npm run demo`: a scripted agent session. An SDK Client (standing in for Claude Code) spawns
// the built `loadout serve` over stdio against the servers bundled with the repo, in a temp dir,
// and walks through discover → build → equip → call → inspect → unequip, printing each step.
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import path from 'node:path';
import { CLI, prepareDemo, type DemoDirs } from './setup.js';
import { agentCalls, answer, event, nameList, say, step, style } from './terminal.js';

const startedAt = performance.now();

function textOf(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
}

async function runSession(dirs: DemoDirs): Promise<void> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', '--config', dirs.configDir, '--data', dirs.dataDir, '--log-level', 'warn'],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'loadout-demo', version: '1.0.0' }, { capabilities: {} });
  let listed: string[] = [];
  let notifications = 0;
  // Like Claude Code: on list_changed, re-read the tool list at once.
  client.setNotificationHandler('notifications/tools/list_changed', async () => {
    notifications += 1;
    event(`notifications/tools/list_changed #${notifications} → re-reading tools/list`);
    // A plain request: listTools() does more work after the answer arrives than callTool() does,
    // and the re-read list must be in hand before the equip's answer is shown.
    listed = (await client.request({ method: 'tools/list' })).tools.map((tool) => tool.name);
    event(`tools/list now has ${listed.length} tools`);
  });
  const call = async (tool: string, args: Record<string, unknown>, maxLines?: number): Promise<CallToolResult> => {
    agentCalls(tool, args);
    const result = await client.callTool({ name: tool, arguments: args });
    answer(textOf(result), { maxLines, error: result.isError === true });
    return result;
  };

  try {
    await client.connect(transport);
    step('connect', 'the client starts `loadout serve` and lists its tools');
    const { tools } = await client.listTools();
    listed = tools.map((tool) => tool.name);
    const bytes = Buffer.byteLength(JSON.stringify({ tools }));
    answer(
      `${tools.length} meta-tools, ${(bytes / 1024).toFixed(1)} KiB of tools/list, listChanged: ${client.getServerCapabilities()?.tools?.listChanged}`,
    );
    nameList(listed);

    step('discover', 'search every tool of every server behind loadout');
    await call('discover-all-tools', { query: 'read a file', limit: 5 });

    step('build', 'save a toolset for the task at hand');
    await call('build-toolset', {
      name: 'todo',
      description: 'Read the TODO, count it, remember it',
      tools: ['files.read_text_file', 'text.count_words', 'memory.create_entities'],
    });

    step('equip', 'the tools appear under flattened names, announced by one list_changed');
    const metaTools = new Set(listed);
    await call('equip-toolset', { name: 'todo' });
    event(`new in tools/list, after the ${metaTools.size} meta-tools:`);
    nameList(listed.filter((name) => !metaTools.has(name)));

    step('call', 'the agent uses the equipped tools as its own');
    const todoFile = path.join(dirs.workspace, 'TODO.md');
    const read = await call('files_read_text_file', { path: todoFile }, 4);
    const counted = await call('text_count_words', { text: textOf(read) });
    event(`structuredContent ${JSON.stringify(counted.structuredContent)}`);
    await call(
      'memory_create_entities',
      { entities: [{ name: 'launch', entityType: 'checklist', observations: [`TODO.md has ${textOf(counted)}`] }] },
      2,
    );

    step('fallback', 'call-tool reaches any catalog tool, equipped or not');
    await call('call-tool', { tool: 'text.slugify', arguments: { text: 'Ship loadout to the team!' } });

    step('inspect', 'what is equipped, and what is saved');
    await call('get-active-toolset', {});
    await call('list-saved-toolsets', {});

    step('unequip', 'withdraw the tools again, one more list_changed');
    await call('unequip-toolset', {});
    event(`tools/list is back to the ${listed.length} meta-tools`);

    step('mistakes', 'bad input gets one readable sentence, and loadout stays up');
    await call('equip-toolset', { name: 'todos' });
  } catch (error) {
    if (stderr.trim()) say(style.dim(stderr.trim().split('\n').slice(-5).join('\n')));
    throw error;
  } finally {
    await client.close();
  }
}

const dirs = await prepareDemo();
say(
  style.bold('loadout demo') +
    style.dim(` — a scripted agent session against the bundled memory, files and text servers (temp dir ${dirs.root})`),
);
try {
  await runSession(dirs);
  say();
  say(
    style.dim(
      `Done in ${((performance.now() - startedAt) / 1000).toFixed(1)} s. Nothing outside ${dirs.root} was touched; it is removed now.`,
    ),
  );
  // The demo's last word is the reader's next step: the same gateway in front of their own servers, shown before anything changes.
  say(
    `Next, with your own servers: ${style.bold('loadout setup claude-code --dry-run')} (shows what it would change, and changes nothing)`,
  );
} catch (error) {
  say(style.red(`demo failed: ${error instanceof Error ? error.message : String(error)}`));
  process.exitCode = 1;
} finally {
  await dirs.cleanup();
}
