// A tool's purpose for its compact line: the first sentence that says what the tool does, without
// the boilerplate real servers put in descriptions (warnings in capitals, markdown, `Args:` and
// `Returns:` blocks, lists of error responses, "This tool …" framing).

// A line that opens a block of reference text rather than the purpose: parameters, results, errors, examples.
const SECTION_START =
  /^\s*(#+\s*)?(args|arguments|parameters|params|inputs?|input options|returns?|raises|errors?|error responses?|error codes|throws|responses?|outputs?|examples?|usage|notes?|common use cases|use cases|when to use)\b[^\n]{0,30}:/im;
// A paragraph that warns or commands rather than describes ("⚠️ **MANDATORY: …", "IMPORTANT: …").
const WARNING = /^(\W|_)*(important|mandatory|critical|warning|note|caution|attention|required|requirements)\b/i;

/** The purpose of a tool in one sentence, from its description. */
export function toolPurpose(description: string): string {
  const body = description.split(SECTION_START)[0] ?? '';
  const paragraphs = body
    .split(/\n\s*\n/)
    .map(plain)
    .filter(Boolean);
  const paragraph = paragraphs.find((text) => !WARNING.test(text)) ?? paragraphs[0] ?? '';
  return firstSentence(paragraph).replace(/^this tool (is used to |helps (to )?|will |can )?(\p{L})/iu, (_match, ...groups) =>
    String(groups[2]).toUpperCase(),
  );
}

/** Markdown and layout gone: links keep their text, emphasis and code marks go, lines join. */
function plain(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>\n]+>/g, ' ')
    .replace(/^\s*#+\s*(.*)$/gm, '$1.')
    .replace(/^\s*([-*+]|\d+\.)\s+/gm, '')
    .replace(/(\*\*|__|\*|`+|~~)/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function firstSentence(text: string): string {
  const end = text.search(/[.!?](\s|$)/);
  return end >= 0 ? text.slice(0, end + 1) : text;
}
