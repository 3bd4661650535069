// A prompt blueprint (chat or completion) as a conversation: one bubble per message with its role,
// text, thinking, tool calls and any other content block shown as JSON. All of it as text.
import { Json } from "../ui";

function Block({ block }: { block: any }) {
  if (!block || typeof block !== "object") return <p class="text">{String(block ?? "")}</p>;
  switch (block.type) {
    case "text":
      return <p class="text">{String(block.text ?? "")}</p>;
    case "thinking":
      return (
        <details class="thinking">
          <summary>thinking</summary>
          <p class="text">{String(block.thinking ?? "")}</p>
        </details>
      );
    case "image_url":
      // Not loaded: the page fetches nothing from other hosts; the address is shown instead.
      return <p class="muted">[image] {String(block.image_url?.url ?? "").slice(0, 200)}</p>;
    default:
      return <Json value={block} />;
  }
}

function ToolCall({ call }: { call: any }) {
  const fn = call?.function ?? {};
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
        <span class="badge">tool call</span> <code>{String(fn.name ?? call?.name ?? "?")}</code>
        {call?.id ? <span class="muted"> {String(call.id)}</span> : null}
      </div>
      <Json value={args} />
    </div>
  );
}

function Content({ content }: { content: any }) {
  if (content === null || content === undefined) return null;
  if (typeof content === "string") return <p class="text">{content}</p>;
  if (Array.isArray(content)) return <>{content.map((b, i) => <Block block={b} key={i} />)}</>;
  return <Json value={content} />;
}

export function Conversation({ blueprint }: { blueprint: any }) {
  if (!blueprint) return <p class="muted">none</p>;
  if (blueprint.type === "completion") {
    return (
      <div class="conversation">
        <div class="message role-completion" data-testid="message">
          <div class="role">completion</div>
          <Content content={blueprint.content} />
        </div>
      </div>
    );
  }
  const messages: any[] = Array.isArray(blueprint.messages) ? blueprint.messages : [];
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
          {(m.tool_calls ?? []).map((c: any, j: number) => (
            <ToolCall call={c} key={j} />
          ))}
          {m.function_call ? <ToolCall call={{ function: m.function_call }} /> : null}
        </div>
      ))}
    </div>
  );
}
