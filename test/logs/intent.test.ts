// The lexical intent classifier: the first category whose cue appears wins, in the documented order.
import { describe, expect, it } from "vitest";
import { agentIntentOf, userIntentOf } from "../../src/logs/intent";

describe("userIntentOf", () => {
  it.each([
    ["This is still broken, fix it", "frustrated"],
    ["it does not work", "frustrated"],
    ["why??!!", "frustrated"],
    ["Thanks, that works", "satisfied"],
    ["How do I reset my password?", "curious"],
    ["tell me about your plans", "curious"],
  ])("%j → %s", (text, intent) => {
    expect(userIntentOf(text)).toBe(intent);
  });

  it("takes the first category in order when cues of several appear", () => {
    // A frustrated cue beats a thank-you and a question in the same message.
    expect(userIntentOf("thanks, but why is it still broken?")).toBe("frustrated");
    expect(userIntentOf("great, how does it work?")).toBe("satisfied");
  });

  it("no cue, or no text, is no intent", () => {
    expect(userIntentOf("Summarize the attached report.")).toBeNull();
    expect(userIntentOf("")).toBeNull();
  });

  it("matches whole words only", () => {
    expect(userIntentOf("The showhow module")).toBeNull();
    expect(userIntentOf("thanksgiving dinner plan")).toBeNull();
  });

  it("reads only the first 4000 characters of a long message", () => {
    const filler = "a ".repeat(2000);
    expect(userIntentOf(`${filler.slice(0, 3990)} thanks`)).toBe("satisfied");
    expect(userIntentOf(`${filler} thanks`)).toBeNull();
  });
});

describe("agentIntentOf", () => {
  it.each([
    ["I can't help with that request.", "refusal"],
    ["I'm unable to share that.", "refusal"],
    ["Sorry about the confusion.", "apologetic"],
    ["I'm not sure, but it might be the cache.", "uncertain"],
    ["Here is the summary you asked for.", null],
  ])("%j → %s", (text, intent) => {
    expect(agentIntentOf(text)).toBe(intent);
  });

  it("a refusal that apologizes is a refusal (refusal is checked first)", () => {
    expect(agentIntentOf("Sorry, I can't help with that.")).toBe("refusal");
  });
});
