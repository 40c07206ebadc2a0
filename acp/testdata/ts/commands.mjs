// The official TypeScript ACP client (@agentclientprotocol/sdk) reading
// the available_commands_update acp.Serve sends after session/new,
// session/load and session/resume: acp/commands_test.go runs it with Serve
// on the other end of its stdin and stdout, and reads the report it
// writes to stderr as one JSON line. The SDK checks each session/update
// against ACP's schema before the handler sees it.
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";
import { Readable, Writable } from "node:stream";

const seen = [];
const app = client({ name: "link-ts-peer" }).onNotification(methods.client.session.update, (ctx) => {
  seen.push(ctx.params);
});

const stream = ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const report = await app.connectWith(stream, async (ctx) => {
  await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const created = await ctx.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
  await ctx.request(methods.agent.session.load, { sessionId: "slack:D0123ABCDEF", cwd: "/", mcpServers: [] });
  await ctx.request(methods.agent.session.resume, { sessionId: "telegram:42", cwd: "/" });
  // Its answer comes after the last session's update.
  await ctx.request("_link/recover", {});
  return { created, seen };
});
process.stderr.write(JSON.stringify(report) + "\n");
process.exit(0);
