// A prompt blueprint (chat or completion) as a conversation: one bubble per message with its role,
// text, thinking, tool calls and any other content block shown as JSON. All of it as text. The
// blueprint is what was logged (free JSON), so each part is read with a check.
import { listOf, recordOf } from "../json";
import { Json } from "../ui";

function Block({ block }: { block: unknown }) {
  if (!block || typeof block !== "object") return <p class="text">{String(block ?? "")}</p>;
  const b = recordOf(block);
  switch (b.type) {
    case "text":
      return <p class="text">{String(b.text ?? "")}</p>;
    case "thinking":
      return (
        <details class="thinking">
          <summary>thinking</summary>
          <p class="text">{String(b.thinking ?? "")}</p>
        </details>
      );
    case "image_url":
      // Not loaded: the page fetches nothing from other hosts; the address is shown instead.
      return <p class="muted">[image] {String(recordOf(b.image_url).url ?? "").slice(0, 200)}</p>;
    default:
      return <Json value={block} />;
  }
}

function ToolCall({ call }: { call: unknown }) {
  const c = recordOf(call);
  const fn = recordOf(c.function);
  let args: unknown = fn.arguments;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      /* shown as it came */
    }
  }
  return (
    <div class="tool-call" data-testid="tool-call">
      <div>
        <span class="badge">tool call</span> <code>{String(fn.name ?? c.name ?? "?")}</code>
        {c.id ? <span class="muted"> {String(c.id)}</span> : null}
      </div>
      <Json value={args} />
    </div>
  );
}

function Content({ content }: { content: unknown }) {
  if (content === null || content === undefined) return null;
  if (typeof content === "string") return <p class="text">{content}</p>;
  if (Array.isArray(content)) return <>{content.map((b, i) => <Block block={b} key={i} />)}</>;
  return <Json value={content} />;
}

export function Conversation({ blueprint }: { blueprint: unknown }) {
  if (!blueprint) return <p class="muted">none</p>;
  const bp = recordOf(blueprint);
  if (bp.type === "completion") {
    return (
      <div class="conversation">
        <div class="message role-completion" data-testid="message">
          <div class="role">completion</div>
          <Content content={bp.content} />
        </div>
      </div>
    );
  }
  const messages = listOf(bp.messages).map(recordOf);
  if (!messages.length) return <p class="muted">no messages</p>;
  return (
    <div class="conversation">
      {messages.map((m, i) => (
        <div class={`message role-${String(m.role ?? "unknown").replace(/[^a-z]/g, "")}`} key={i} data-testid="message">
          <div class="role">
            {String(m.role ?? "?")}
            {m.name ? <span class="muted"> · {String(m.name)}</span> : null}
            {m.tool_call_id ? <span class="muted"> · for {String(m.tool_call_id)}</span> : null}
          </div>
          <Content content={m.content} />
          {listOf(m.tool_calls).map((c, j) => (
            <ToolCall call={c} key={j} />
          ))}
          {m.function_call ? <ToolCall call={{ function: m.function_call }} /> : null}
        </div>
      ))}
    </div>
  );
}
