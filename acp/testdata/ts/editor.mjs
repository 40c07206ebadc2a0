// The official TypeScript ACP client (@agentclientprotocol/sdk) as an
// editor of `lnk-link-harness serve --stdio`: cmd/internal/serve's
// editor_test.go runs it with ServeStdio on the other end of its stdin
// and stdout, one scenario a run (the first argument), and reads the
// report it writes to stderr as one JSON line. Every method and field is
// the stable v1 surface of the SDK's default entrypoint.
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";
import { Readable, Writable } from "node:stream";

const scenario = process.argv[2];
const seen = [];
let onTaken = null;
const app = client({ name: "link-ts-editor" })
  .onNotification(methods.client.session.update, (ctx) => {
    seen.push(ctx.params);
  })
  .onNotification("_link/taken", (p) => p, () => {
    if (onTaken) onTaken();
  });

const text = (t) => [{ type: "text", text: t }];
const refusal = async (p) => {
  try {
    return { answer: await p };
  } catch (e) {
    return { code: e.code, message: e.message };
  }
};

const scenarios = {
  // Two conversations, then the list an editor shows of them.
  async list(ctx, init) {
    for (const [id, words] of [["discord:100", "Plan the trip to Lisbon\nin May"], ["discord:200", "Draft the release notes"]]) {
      await ctx.request(methods.agent.session.resume, { sessionId: id, cwd: "/work" });
      await ctx.request(methods.agent.session.prompt, { sessionId: id, prompt: text(words) });
    }
    const list = await ctx.request(methods.agent.session.list, { cwd: "/work" });
    const all = await ctx.request(methods.agent.session.list, {});
    const badCursor = await refusal(ctx.request(methods.agent.session.list, { cursor: "not one of ours" }));
    const infos = seen.filter((n) => n.update.sessionUpdate === "session_info_update");
    return { init, list, all, badCursor, infos };
  },
  // A session closed: its running prompt cancelled, a prompt to it
  // refused, then resumed and answered again.
  async close(ctx, init) {
    const id = "discord:300";
    await ctx.request(methods.agent.session.resume, { sessionId: id, cwd: "/" });
    const taken = new Promise((resolve) => (onTaken = resolve));
    const running = ctx.request(methods.agent.session.prompt, { sessionId: id, prompt: text("take your time") });
    await taken;
    const closed = await ctx.request(methods.agent.session.close, { sessionId: id });
    const runningAnswer = await running;
    const afterClose = await refusal(ctx.request(methods.agent.session.prompt, { sessionId: id, prompt: text("still there?") }));
    const closeAgain = await refusal(ctx.request(methods.agent.session.close, { sessionId: id }));
    await ctx.request(methods.agent.session.resume, { sessionId: id, cwd: "/" });
    const reopened = await ctx.request(methods.agent.session.prompt, { sessionId: id, prompt: text("back again") });
    return { init, closed, runningAnswer, afterClose, closeAgain, reopened };
  },
  // The first half of a resume: a conversation begun.
  async begin(ctx, init) {
    await ctx.request(methods.agent.session.resume, { sessionId: "discord:400", cwd: "/" });
    const answer = await ctx.request(methods.agent.session.prompt, { sessionId: "discord:400", prompt: text("My name is Ada.") });
    return { init, answer };
  },
  // Its second half, in another process: the conversation resumed.
  async resume(ctx, init) {
    const resumed = await ctx.request(methods.agent.session.resume, { sessionId: "discord:400", cwd: "/" });
    const answer = await ctx.request(methods.agent.session.prompt, { sessionId: "discord:400", prompt: text("What is my name?") });
    const replayed = seen.filter((n) => n.update.sessionUpdate === "user_message_chunk");
    return { init, resumed, answer, replayed };
  },
  // Or its second half by session/load: the conversation replayed.
  async load(ctx, init) {
    const loaded = await ctx.request(methods.agent.session.load, { sessionId: "discord:400", cwd: "/", mcpServers: [] });
    // What came before the answer: the replay.
    const replayed = seen.map((n) => ({ kind: n.update.sessionUpdate, text: n.update.content?.text, messageId: n.update.messageId }));
    const answer = await ctx.request(methods.agent.session.prompt, { sessionId: "discord:400", prompt: text("What is my name?") });
    return { init, loaded, replayed, answer };
  },
  // The model picker: listed in session/new's answer, set to another
  // model, a wrong value refused; set back by /model:set in the chat,
  // the picker told.
  async model(ctx, init) {
    const created = await ctx.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
    const sessionId = created.sessionId;
    const picker = created.configOptions.find((o) => o.category === "model");
    const other = picker.options.find((o) => o.value !== picker.currentValue);
    const set = await ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: picker.id, value: other.value });
    const answer = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: text("which model are you?") });
    const wrong = await refusal(ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: picker.id, value: "nobody/no-model" }));
    const resumed = await ctx.request(methods.agent.session.resume, { sessionId, cwd: "/" });
    await ctx.request(methods.agent.session.prompt, { sessionId, prompt: text("/model:set " + picker.currentValue) });
    const updates = seen.filter((n) => n.update.sessionUpdate === "config_option_update");
    return { init, created, chosen: other.value, set, answer, wrong, resumed, updates };
  },
  // A turn's usage, and its chunks' message ids.
  async usage(ctx, init) {
    await ctx.request(methods.agent.session.resume, { sessionId: "discord:500", cwd: "/" });
    const first = await ctx.request(methods.agent.session.prompt, { sessionId: "discord:500", prompt: text("count for me") });
    const second = await ctx.request(methods.agent.session.prompt, { sessionId: "discord:500", prompt: text("and again") });
    return { init, first, second, seen };
  },
  // $/cancel_request of a prompt in flight: sent by the SDK when the
  // request's cancellationSignal aborts.
  async cancel(ctx, init) {
    const id = "discord:600";
    await ctx.request(methods.agent.session.resume, { sessionId: id, cwd: "/" });
    const abort = new AbortController();
    const taken = new Promise((resolve) => (onTaken = resolve));
    const running = refusal(ctx.request(methods.agent.session.prompt, { sessionId: id, prompt: text("a long one") }, { cancellationSignal: abort.signal }));
    await taken;
    abort.abort();
    const cancelled = await running;
    const next = await ctx.request(methods.agent.session.prompt, { sessionId: id, prompt: text("a short one") });
    return { init, cancelled, next };
  },
};

const stream = ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const report = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  return scenarios[scenario](ctx, init);
});
process.stderr.write(JSON.stringify(report) + "\n");
process.exit(0);
