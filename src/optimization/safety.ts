// Instruction-injection checks for candidate descriptions: a description is text the agent
// reads as instructions, so rewrites that try to steer it elsewhere are refused unless forced.
// Pure text checks; callers decide whether a finding blocks.

interface Check {
  name: string;
  pattern: RegExp;
}

// Each check names what it found so the refusal can say why.
const CHECKS: readonly Check[] = [
  {
    name: 'asks to ignore or override earlier instructions',
    pattern:
      /\b(ignore|disregard|forget|override)\b[^.]{0,40}\b(previous|prior|above|earlier|all|other|system)\b[^.]{0,20}\b(instructions?|prompts?|rules?|messages?|guidelines?)/i,
  },
  {
    name: 'claims a system or developer role',
    pattern: /(^|\s)(system|developer|assistant)\s*(prompt|message)?\s*:|<\/?(system|instructions?)>|\[\/?INST\]/i,
  },
  {
    name: 'tells the agent to call or prefer other tools',
    pattern:
      /\b(always|first|must|instead|also|then|before)\b[^.]{0,30}\b(call|use|invoke|run|prefer)\b[^.]{0,30}\b(tool|function|server|mcp)s?\b/i,
  },
  { name: 'tells the agent to avoid other tools', pattern: /\b(never|do not|don't)\s+(call|use|invoke)\s+(any\s+)?other\s+tools?\b/i },
  { name: 'contains a URL', pattern: /\b(https?|ftp|file|data|javascript):\/?\/?\S|\bwww\.\S+\.\S+/i },
  {
    name: 'asks to reveal secrets or hide actions',
    pattern:
      /\b(reveal|print|send|exfiltrate|leak)\b[^.]{0,30}\b(secret|token|password|api key|credentials?|system prompt)|\b(do not|don't|never)\s+(tell|inform|mention)[^.]{0,20}\buser\b/i,
  },
  {
    name: 'contains hidden Unicode (zero-width, bidi control or tag characters)',
    pattern: /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u00AD]|[\u{E0000}-\u{E007F}]/u,
  },
  { name: 'contains control characters', pattern: /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/ },
];

/** The names of the injection patterns found in `text` (empty when it looks clean). */
export function findInjectionPatterns(text: string): string[] {
  return CHECKS.filter((check) => check.pattern.test(text)).map((check) => check.name);
}
