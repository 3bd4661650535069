// Pure: the virtual intent fields of the filter group (user_intent, agent_intent), classified when a
// request is logged by a small lexical classifier: no model call on the hot path, deterministic,
// documented in docs/logging-and-search.md. The first category whose cue appears wins, in the order listed.
import type { AGENT_INTENTS, USER_INTENTS } from "../db/schema";

export type UserIntent = (typeof USER_INTENTS)[number];
export type AgentIntent = (typeof AGENT_INTENTS)[number];

const USER_CUES: [UserIntent, RegExp][] = [
  [
    "frustrated",
    /\b(not working|doesn'?t work|does not work|still (?:broken|wrong|not)|useless|ridiculous|annoy(?:ed|ing)|frustrat\w*|wtf|terrible|awful|waste of time|fed up|stupid|again\?!|you(?:'re| are) wrong|that'?s wrong)\b|!{2,}|\?!/i,
  ],
  ["satisfied", /\b(thanks?|thank you|thx|great|perfect|awesome|excellent|that works|works now|love it|helpful|appreciate)\b/i],
  ["curious", /\b(how|why|what|when|where|which|who|can you explain|could you explain|tell me about|wonder(?:ing)?|curious)\b|\?\s*$/i],
];

const AGENT_CUES: [AgentIntent, RegExp][] = [
  [
    "refusal",
    /\b(i can(?:no|')t (?:help|assist|do|provide|comply)|i(?:'m| am) (?:not able|unable) to|i won'?t|i must decline|i(?:'m| am) not allowed|against (?:my|the) (?:guidelines|policy|policies))\b/i,
  ],
  ["apologetic", /\b(sorry|apologi[sz]e|apologies|my mistake|my bad|i was wrong)\b/i],
  [
    "uncertain",
    /\b(i(?:'m| am) not (?:sure|certain)|i don'?t know|not entirely sure|might be|may be|possibly|perhaps|it'?s unclear|i think|probably|hard to say)\b/i,
  ],
];

function classify<T extends string>(cues: [T, RegExp][], text: string): T | null {
  if (!text) return null;
  // Cues sit near the start of a message; bounding the scan keeps a huge message cheap.
  const sample = text.length > 4000 ? text.slice(0, 4000) : text;
  for (const [intent, re] of cues) if (re.test(sample)) return intent;
  return null;
}

export const userIntentOf = (text: string): UserIntent | null => classify(USER_CUES, text);
export const agentIntentOf = (text: string): AgentIntent | null => classify(AGENT_CUES, text);
