// A zero-logic stdio relay: spawns the command given as arguments and copies bytes both ways.
// It is the physical floor of putting any process between a client and a server, so the bench
// can show how much of loadout's added latency is the extra hop itself.
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
if (!command) throw new Error('usage: relay <command> [args…]');
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.on('exit', (code) => {
  process.exitCode = code ?? 0;
  process.stdin.destroy();
});
