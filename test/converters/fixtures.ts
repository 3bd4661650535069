// Provider calls as the promptlayer SDK posts them to /track-request: each provider's documented
// request and response shapes (streamed calls arrive already assembled by the SDK).

export const openaiChat = {
  function_name: "openai.chat.completions.create",
  provider_type: "openai",
  kwargs: {
    model: "gpt-4o",
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }, { type: "image_url", image_url: { url: "https://example.com/p.png" } }] },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "18C" },
    ],
    tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
    temperature: 0.2,
    stream: false,
  },
  request_response: {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1730000000,
    model: "gpt-4o-2024-08-06",
    choices: [{ index: 0, message: { role: "assistant", content: "18C and sunny.", refusal: null }, finish_reason: "stop", logprobs: null }],
    usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
  },
};

/** A streamed chat call: the SDK posts the chunks merged into one completion. */
export const openaiChatToolReply = {
  ...openaiChat,
  request_response: {
    id: "chatcmpl-2",
    model: "gpt-4o-mini",
    choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_9", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } }] }, finish_reason: "tool_calls" }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  },
};

export const openaiResponses = {
  function_name: "openai.responses.create",
  provider_type: "openai",
  kwargs: { model: "gpt-4.1", instructions: "Be brief.", input: "Name a color.", max_output_tokens: 50 },
  request_response: {
    id: "resp_1",
    object: "response",
    model: "gpt-4.1-2025-04-14",
    status: "completed",
    output: [
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Pick one." }] },
      { type: "message", id: "msg_1", role: "assistant", content: [{ type: "output_text", text: "Blue.", annotations: [] }] },
    ],
    usage: { input_tokens: 12, output_tokens: 3, total_tokens: 15 },
  },
};

export const anthropicMessages = {
  function_name: "anthropic.messages.create",
  provider_type: "anthropic",
  kwargs: {
    model: "claude-sonnet-4-20250514",
    max_tokens: 1024,
    system: "You are terse.",
    messages: [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18C" }] },
    ],
    tools: [{ name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }],
  },
  request_response: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-20250514",
    content: [
      { type: "thinking", thinking: "Easy.", signature: "sig" },
      { type: "text", text: "18C." },
    ],
    stop_reason: "end_turn",
    usage: { input_tokens: 2000, output_tokens: 100 },
  },
};

export const anthropicError = {
  ...anthropicMessages,
  request_response: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
};

export const gemini = {
  function_name: "google.model.generate_content",
  provider_type: "google",
  kwargs: { model: "gemini-2.0-flash", contents: [{ role: "user", parts: [{ text: "Hi" }] }], config: { temperature: 0.5, systemInstruction: "Be nice." } },
  request_response: {
    candidates: [{ content: { role: "model", parts: [{ text: "Hello!" }, { functionCall: { name: "wave", args: { times: 2 } } }] }, finishReason: "STOP" }],
    usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 6, totalTokenCount: 10 },
    modelVersion: "gemini-2.0-flash",
  },
};

export const mistral = {
  function_name: "mistral.client.chat",
  provider_type: "mistral",
  kwargs: { model: "mistral-large-latest", messages: [{ role: "user", content: "Bonjour" }] },
  request_response: { id: "m1", model: "mistral-large-latest", choices: [{ index: 0, message: { role: "assistant", content: "Salut" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
};

export const bedrock = {
  function_name: "boto3.bedrock-runtime.converse",
  provider_type: "amazon.bedrock",
  kwargs: { modelId: "anthropic.claude-3-5-sonnet-20240620-v1:0", system: [{ text: "Be brief." }], messages: [{ role: "user", content: [{ text: "Hi" }] }], inferenceConfig: { maxTokens: 100 } },
  request_response: {
    output: { message: { role: "assistant", content: [{ text: "Hello." }] } },
    stopReason: "end_turn",
    usage: { inputTokens: 7, outputTokens: 2, totalTokens: 9 },
  },
};
