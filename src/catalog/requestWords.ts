// The built-in request vocabulary: the everyday words people and agents use to ask for a tool
// ("remember", "look up", "jot down", "ping", "ticket") mapped to the words tools describe
// themselves with ("memory", "search", "note", "message", "issue"). Word vectors miss these:
// in general text "remember" sits next to "read" and "ping" next to "pong". Written from how
// requests are phrased in general, never from one catalog's tools or one query's answer. The
// search adds the mapped words at a lower weight than the query's own (see REQUEST_WORD_WEIGHT).
import { stem } from './searchText.js';

// One line per group: request words (unstemmed, as asked), then after ':' the tool words they stand for.
const TABLE = `
remember memorize memorise memorized: memory store save record
recall recollect: memory retrieve search
forget: delete remove memory
jot note notes: note memory knowledge write save record add
memo memos: note memory
fact facts knowledge: memory information knowledge note
look lookup: search find get
fetch grab: get retrieve download read
show see display: get list view
check verify: get status inspect
tell: get describe
ping notify nudge alert dm: message send notify
post announce: send create publish message
reply respond: reply comment message
make new: create
start kick launch begin: run trigger start create
rerun retry restart: run trigger rerun restart
kill abort halt: cancel stop terminate
erase wipe trash nuke drop: delete remove
edit change modify tweak alter: update edit set
save store keep persist: save store write
upload: upload write attach
visit browse: open navigate page
screenshot snapshot snap capture: screenshot capture image
plot graph visualize visualise draw: chart graph plot visualization
summarize summarise recap: summary
count tally: count total number
give: assign
schedule plan: schedule date due
relocate: move rename
duplicate clone: copy duplicate
connect attach: link attach relation
tag: label tag
close resolve finish complete done: close complete resolve status
invite onboard: invite add member
kick ban: remove ban member
follow watch subscribe: subscribe watch webhook
debug troubleshoot diagnose: log error trace
deploy ship release: deploy release pipeline
investigate examine inspect: get inspect describe detail
ticket tickets bug bugs defect: issue
todo todos chore chores: task
chat room: channel message
msg: message
mail: email message
doc docs: document documentation
folder dir: directory folder
repo repos: repository
db dbs: database
pr prs: pull request
env: environment
settings prefs preferences: config configuration settings
stats: statistics metric
pic picture photo: image screenshot
site website webpage: page url
teammate colleague coworker someone somebody person people: user member
deadline: due date
meeting: event calendar
reminder: reminder schedule notify
crash failure failing broken: error failure
slow speed: performance latency
sprint sprints: cycle iteration
card: task issue card
diagram: chart diagram
password creds: secret credential token
`;

/** Request word (and its stem) → the tool words it stands for. */
export const REQUEST_WORDS: ReadonlyMap<string, readonly string[]> = parseTable(TABLE);

function parseTable(table: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of table.trim().split('\n')) {
    const [asked = '', meant = ''] = line.split(':');
    const targets = meant.trim().split(/\s+/);
    for (const word of asked.trim().split(/\s+/)) {
      for (const key of new Set([word, stem(word)])) {
        const others = targets.filter((target) => stem(target) !== stem(word));
        map.set(key, [...new Set([...(map.get(key) ?? []), ...others])]);
      }
    }
  }
  return map;
}
