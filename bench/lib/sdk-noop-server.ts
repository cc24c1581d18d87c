/**
 * The strongest honest baseline for an A2A round trip: a minimal @a2a-js/sdk server (express,
 * the SDK's JSON-RPC handler, DefaultRequestHandler, the SDK's InMemoryTaskStore) whose
 * executor answers every message with a finished task at once. No logging, no limits, no
 * security headers: what the SDK itself costs. Run as its own process by bench/round-trip.ts;
 * prints `listening <url>` on stdout.
 *
 *   node --import tsx bench/lib/sdk-noop-server.ts
 */
import express from 'express';
import fs from 'node:fs';
import { AgentCard, Artifact, TaskState, type Task } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const answerFile = process.env.NOOP_ARTIFACTS_FILE;
const artifacts: Artifact[] = answerFile ? (JSON.parse(fs.readFileSync(answerFile, 'utf8')) as unknown[]).map((a) => Artifact.fromJSON(a)) : [];
const executor: AgentExecutor = {
  execute: async (ctx, bus) => {
    const task: Task = {
      id: ctx.taskId,
      contextId: ctx.contextId,
      status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() },
      artifacts,
      history: [ctx.userMessage],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    bus.finished();
  },
  cancelTask: async () => {},
};

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const card = AgentCard.fromJSON({
    name: 'no-op',
    description: 'Answers every message with a completed task.',
    version: '1.0.0',
    supportedInterfaces: [{ url: `http://127.0.0.1:${port}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'noop', name: 'No-op', description: 'Does nothing.', tags: ['noop'] }],
  });
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  console.log(`listening http://127.0.0.1:${port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
