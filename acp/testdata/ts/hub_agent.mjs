// An ACP agent on the official TypeScript SDK (@agentclientprotocol/sdk),
// run over stdio behind Harness Hub by hub/ts_test.go: it offers what
// HUB_TS_CAPS lists (resume, load, close, list, model: a config option of
// category model, ids: messageIds on its chunks and a usage_update after
// each answer), keeps its sessions in HUB_TS_STATE, and appends each
// thing it is asked or told to HUB_TS_LOG, a JSON line each.
//
// Each session it makes or takes up lists one command, clear. A resumed
// session runs on the default model again, as a new one does.
//
// A prompt's text says what it does: "model" answers the session's model;
// "hang" waits until its request is cancelled; "big" streams a chunk of
// 100 KB, then hangs; "permission" asks a permission it cancels
// ($/cancel_request) as it asks; "/clear" answers "cleared"; anything
// else is answered in two messages, "heard <text>" and "turn <n>", n
// counting the session's turns.
import { agent, methods, ndJsonStream, RequestError } from "@agentclientprotocol/sdk";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";

const caps = new Set((process.env.HUB_TS_CAPS ?? "").split(",").filter(Boolean));
const state = process.env.HUB_TS_STATE;
const hangResume = process.env.HUB_TS_HANG_RESUME === "1";
const log = (o) => appendFileSync(process.env.HUB_TS_LOG, JSON.stringify(o) + "\n");

const file = (id) => join(state, encodeURIComponent(id) + ".json");
const read = (id) => (existsSync(file(id)) ? JSON.parse(readFileSync(file(id), "utf8")) : null);
const write = (id, s) => writeFileSync(file(id), JSON.stringify(s));

const models = [
  { group: "fast", name: "Fast", options: [{ value: "small", name: "Small" }] },
  { group: "deep", name: "Deep", options: [{ value: "large-2", name: "Large-Two" }] },
];
const configOptions = (s) =>
  caps.has("model")
    ? [
        { id: "mode", name: "Mode", category: "mode", type: "select", currentValue: "ask", options: [{ value: "ask", name: "Ask" }] },
        { id: "pick", name: "Model", category: "model", type: "select", currentValue: s.model, options: models },
      ]
    : undefined;

// commands lists the session's commands to the client.
const commands = (ctx, sessionId) =>
  ctx.client.notify(methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: "available_commands_update", availableCommands: [{ name: "clear", description: "Clear" }] },
  });

const taken = (id) => {
  const s = read(id);
  if (!s) throw RequestError.resourceNotFound(id);
  return s;
};

// logged wraps a handler so each request is logged as it comes.
const logged = (method, handler) => async (ctx) => {
  log({ ev: method, params: ctx.params });
  return handler(ctx);
};

let sessions = 0;
let app = agent({ name: "hub-ts-agent" })
  .onRequest(methods.agent.initialize, logged("initialize", () => ({
    protocolVersion: 1,
    agentCapabilities: {
      loadSession: caps.has("load"),
      promptCapabilities: {},
      mcpCapabilities: { http: true },
      sessionCapabilities: {
        ...(caps.has("resume") ? { resume: {} } : {}),
        ...(caps.has("close") ? { close: {} } : {}),
        ...(caps.has("list") ? { list: {} } : {}),
      },
    },
    authMethods: [],
  })))
  .onRequest(methods.agent.session.new, logged("session/new", async (ctx) => {
    const id = `ts-${process.pid}-${++sessions}`;
    const s = { turns: 0, model: "small" };
    write(id, s);
    await commands(ctx, id);
    return { sessionId: id, configOptions: configOptions(s) };
  }))
  .onRequest(methods.agent.session.prompt, logged("session/prompt", (ctx) => prompt(ctx)))
  .onNotification(methods.agent.session.cancel, (ctx) => log({ ev: "session/cancel", params: ctx.params }))
  .onNotification("$/cancel_request", (p) => p, (ctx) => log({ ev: "$/cancel_request", params: ctx.params }));

if (caps.has("resume")) {
  app = app.onRequest(methods.agent.session.resume, logged("session/resume", async (ctx) => {
    if (hangResume) {
      await aborted(ctx, "session/resume");
      throw RequestError.requestCancelled();
    }
    const s = taken(ctx.params.sessionId);
    s.model = "small";
    write(ctx.params.sessionId, s);
    await commands(ctx, ctx.params.sessionId);
    return { configOptions: configOptions(s) };
  }));
}
if (caps.has("load")) {
  app = app.onRequest(methods.agent.session.load, logged("session/load", async (ctx) => {
    taken(ctx.params.sessionId);
    await commands(ctx, ctx.params.sessionId);
    return {};
  }));
}
if (caps.has("close")) {
  app = app.onRequest(methods.agent.session.close, logged("session/close", () => ({})));
}
if (caps.has("model")) {
  app = app.onRequest(methods.agent.session.setConfigOption, logged("session/set_config_option", (ctx) => {
    const { sessionId, configId, value } = ctx.params;
    const s = taken(sessionId);
    if (configId !== "pick" || !models.some((g) => g.options.some((o) => o.value === value))) {
      throw RequestError.invalidParams({ configId, value });
    }
    s.model = value;
    write(sessionId, s);
    return { configOptions: configOptions(s) };
  }));
}

// aborted resolves when the request ctx answers is cancelled, logging by
// what ($/cancel_request aborts with -32800).
function aborted(ctx, what) {
  return new Promise((resolve) => {
    const done = () => {
      log({ ev: "aborted", what, code: ctx.signal.reason?.code ?? null });
      resolve();
    };
    if (ctx.signal.aborted) done();
    else ctx.signal.addEventListener("abort", done, { once: true });
  });
}

async function chunk(ctx, text, messageId) {
  await ctx.client.notify(methods.client.session.update, {
    sessionId: ctx.params.sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, ...(messageId ? { messageId } : {}) },
  });
}

async function prompt(ctx) {
  const id = ctx.params.sessionId;
  const s = taken(id);
  const text = ctx.params.prompt.filter((b) => b.type === "text").map((b) => b.text).join("");
  if (text === "model") {
    await chunk(ctx, `model: ${caps.has("model") ? s.model : "none"}`);
    return { stopReason: "end_turn" };
  }
  if (text === "/clear") {
    await chunk(ctx, "cleared");
    return { stopReason: "end_turn" };
  }
  if (text === "big") {
    await chunk(ctx, "x".repeat(100 << 10));
  }
  if (text === "hang" || text === "big") {
    await chunk(ctx, "hanging");
    await aborted(ctx, "session/prompt");
    return { stopReason: "cancelled" };
  }
  if (text === "permission") {
    const c = new AbortController();
    c.abort();
    let outcome;
    try {
      const res = await ctx.client.request(methods.client.session.requestPermission, {
        sessionId: id,
        toolCall: { toolCallId: "t1", title: "write" },
        options: [{ optionId: "yes", name: "Yes", kind: "allow_once" }],
      }, { cancellationSignal: c.signal });
      outcome = res.outcome.outcome;
    } catch (e) {
      outcome = `error ${e.code}`;
    }
    log({ ev: "permission answered", outcome });
    await chunk(ctx, `permission: ${outcome}`);
    return { stopReason: "end_turn" };
  }
  s.turns++;
  write(id, s);
  const ids = caps.has("ids");
  await chunk(ctx, "heard ", ids ? `m${s.turns}a` : null);
  await chunk(ctx, text, ids ? `m${s.turns}a` : null);
  await chunk(ctx, `turn ${s.turns}`, ids ? `m${s.turns}b` : null);
  if (ids) {
    await ctx.client.notify(methods.client.session.update, {
      sessionId: id,
      update: { sessionUpdate: "usage_update", used: 100 * s.turns, size: 1000, cost: { amount: 0.25, currency: "USD" } },
    });
  }
  return { stopReason: "end_turn" };
}

app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
