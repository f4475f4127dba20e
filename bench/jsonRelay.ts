// The least a gateway that reads what it routes can do: spawns the command given as arguments,
// parses each line both ways, gives each request its own id downstream (as any gateway serving
// several clients must) and puts the client's id back on the answer, then writes the line out
// again. Beside the byte relay (relay.ts) it shows what reading the messages costs by itself.
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

const [command, ...args] = process.argv.slice(2);
if (!command) throw new Error('usage: jsonRelay <command> [args…]');
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
type Message = { id?: string | number; method?: string };
const clientIds = new Map<string, string | number>();
let nextId = 0;

eachMessage(process.stdin, (message) => {
  if (message.id !== undefined && message.method !== undefined) {
    const id = `R${nextId++}`;
    clientIds.set(id, message.id);
    message.id = id;
  }
  child.stdin.write(JSON.stringify(message) + '\n');
});
eachMessage(child.stdout, (message) => {
  const clientId = message.method === undefined && typeof message.id === 'string' ? clientIds.get(message.id) : undefined;
  if (clientId !== undefined) {
    clientIds.delete(message.id as string);
    message.id = clientId;
  }
  process.stdout.write(JSON.stringify(message) + '\n');
});
child.on('exit', (code) => {
  process.exitCode = code ?? 0;
  process.stdin.destroy();
});

function eachMessage(stream: Readable, onMessage: (message: Message) => void): void {
  let partial = '';
  stream.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop()!;
    for (const line of lines) if (line) onMessage(JSON.parse(line) as Message);
  });
}
