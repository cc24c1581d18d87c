/**
 * JSON-RPC DeleteTaskPushNotificationConfig answers `"result": {}`, where the SDK answers
 * `"result": null`.
 *
 * Its response is `google.protobuf.Empty` (a2a.proto; A2A 10.4.10), and v1.0 puts every message
 * on the wire as ProtoJSON (A2A 1.4: the proto is normative; 5.5, ADR-001), which writes Empty as
 * `{}`. A client that reads the result as that message refused the SDK's `null`: a2a-dotnet's
 * JSON-RPC client threw "Failed to deserialize JSON-RPC result" on it, although the config was
 * deleted. The SDK's own clients ignore the result, so they take either. v0.3's
 * `tasks/pushNotificationConfig/delete` keeps `null`, which its schema requires
 * (DeleteTaskPushNotificationConfigSuccessResponse: `"result": {"type": "null"}`).
 *
 * Placed after the middleware that sets res.json (this wraps it); an error answer passes as it is.
 */
import type { RequestHandler, Response } from 'express';

export const jsonRpcEmptyResult: RequestHandler = (req, res, next) => {
  if ((req.body as { method?: unknown } | undefined)?.method !== 'DeleteTaskPushNotificationConfig') return next();
  const json = res.json.bind(res);
  res.json = ((body: unknown) => {
    const answer = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : undefined;
    if (!answer || !('result' in answer) || answer.result !== null) return json(body);
    return json({ ...answer, result: {} });
  }) as Response['json'];
  next();
};
