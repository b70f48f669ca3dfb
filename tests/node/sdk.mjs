// The openai npm SDK against dsv41-sim: streaming chat with tools and usage,
// a tool result sent back, models, and the errors vLLM returns. Every field
// the SDK hands back is asserted, so a format drift in the simulator fails.
// usage: node sdk.mjs BASE_URL KEY
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const [base, key] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0, timeout: 20000 });
const tools = [{
  type: 'function',
  function: {
    name: 'get_weather', description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}];
let passed = 0, failed = 0;
async function check(name, fn) {
  try { await fn(); passed++; console.log(`ok   - ${name}`); }
  catch (e) { failed++; console.log(`FAIL - ${name}: ${e.message}`); }
}

await check('models: list with max_model_len', async () => {
  const page = await client.models.list();
  assert.equal(page.data[0].id, 'deepseek-v4.1-flash');
  assert.equal(page.data[0].object, 'model');
  assert.equal(page.data[0].owned_by, 'vllm');
  assert.equal(typeof page.data[0].max_model_len, 'number');
});

await check('stream: reasoning, content, finish, usage', async () => {
  const stream = await client.chat.completions.create({
    model: 'deepseek-v4.1-flash', stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'What is 17 * 23?' }],
  });
  let content = '', reasoning = '', finish = null, usage = null, role = null, chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, 'chat.completion.chunk');
    assert.equal(typeof chunk.id, 'string');
    assert.equal(typeof chunk.created, 'number');
    if (chunk.usage) usage = chunk.usage;
    const c = chunk.choices[0];
    if (!c) continue;
    role ??= c.delta.role;
    content += c.delta.content ?? '';
    reasoning += c.delta.reasoning ?? '';
    finish = c.finish_reason ?? finish;
  }
  assert.equal(role, 'assistant');
  assert.match(content, /391/);
  assert.ok(reasoning.length > 0, 'reasoning deltas');
  assert.equal(finish, 'stop');
  assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  assert.ok(usage.completion_tokens_details.reasoning_tokens > 0);
  assert.ok(chunks > 3);
});

let call = null;
await check('stream: a tool call assembled from deltas', async () => {
  const stream = await client.chat.completions.create({
    model: 'deepseek-v4.1-flash', stream: true, stream_options: { include_usage: true }, tools,
    messages: [{ role: 'user', content: 'What is the weather in Warsaw?' }],
  });
  const calls = [];
  let finish = null;
  for await (const chunk of stream) {
    for (const tc of chunk.choices[0]?.delta?.tool_calls ?? []) {
      calls[tc.index] ??= { id: '', name: '', arguments: '' };
      if (tc.id) calls[tc.index].id = tc.id;
      if (tc.function?.name) calls[tc.index].name = tc.function.name;
      calls[tc.index].arguments += tc.function?.arguments ?? '';
      if (tc.type) assert.equal(tc.type, 'function');
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(calls.length, 1);
  assert.equal(calls[0].name, 'get_weather');
  assert.deepEqual(JSON.parse(calls[0].arguments), { city: 'Warsaw' });
  assert.equal(finish, 'tool_calls');
  call = calls[0];
});

await check('non-stream: the tool result is used', async () => {
  const r = await client.chat.completions.create({
    model: 'deepseek-v4.1-flash', tools,
    messages: [
      { role: 'user', content: 'What is the weather in Warsaw?' },
      { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
      { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 degrees' },
    ],
  });
  assert.equal(r.object, 'chat.completion');
  assert.match(r.choices[0].message.content, /21 degrees/);
  assert.equal(r.choices[0].finish_reason, 'stop');
  assert.ok(r.usage.completion_tokens > 0);
});

await check('completions: token ids, finish length', async () => {
  const r = await client.completions.create({ model: 'deepseek-v4.1-flash', prompt: [1, 2, 3, 4], max_tokens: 3 });
  assert.equal(r.object, 'text_completion');
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.equal(r.usage.prompt_tokens, 4);
});

await check('errors: a wrong key is an AuthenticationError', async () => {
  const bad = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(bad.models.list(), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
});

await check('errors: too long a context is a BadRequestError', async () => {
  await assert.rejects(
    client.completions.create({ model: 'deepseek-v4.1-flash', prompt: 'x'.repeat(4 * 300000) }),
    (e) => e instanceof OpenAI.BadRequestError && /maximum context length/.test(e.message));
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
