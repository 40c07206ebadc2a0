// The official TypeScript ACP client (@agentclientprotocol/sdk) as an
// independent peer of acp.Serve over stdio: acp/ts_test.go runs it with
// Serve on the other end of its stdin and stdout, and reads the report it
// writes to stderr as one JSON line.
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";
import { Readable, Writable } from "node:stream";

const seen = [];
const app = client({ name: "link-ts-peer" })
  .onNotification(methods.client.session.update, (ctx) => {
    seen.push({ method: "session/update", params: ctx.params });
  })
  .onNotification("_link/taken", (p) => p, (ctx) => {
    seen.push({ method: "_link/taken", params: ctx.params });
  });

const stream = ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const report = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  await ctx.request(methods.agent.session.resume, { sessionId: "telegram:42", cwd: "/" });
  const answer = await ctx.request(methods.agent.session.prompt, {
    sessionId: "telegram:42",
    prompt: [{ type: "text", text: "hello" }, { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" }],
    _meta: { link: { from: "webhook:github" } },
  });
  const steered = await ctx.request(methods.agent.session.prompt, {
    sessionId: "telegram:42",
    prompt: [{ type: "text", text: "steer" }],
  });
  let refused = null;
  try {
    await ctx.request(methods.agent.session.prompt, {
      sessionId: "telegram:42",
      prompt: [{ type: "text", text: "hi" }],
      _meta: { link: { admin: true } },
    });
  } catch (e) {
    refused = { code: e.code, message: e.message };
  }
  const recovered = await ctx.request("_link/recover", { two_phase: true });
  return { init, answer, steered, refused, recovered, seen };
});
process.stderr.write(JSON.stringify(report) + "\n");
process.exit(0);
