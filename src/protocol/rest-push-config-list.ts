/**
 * HTTP+JSON ListTaskPushNotificationConfigs, `GET [/{tenant}]/tasks/{id}/pushNotificationConfigs`,
 * served here in front of the SDK's route, which drops the query: @a2a-js/sdk 1.3 hands the
 * handler pageSize 0 and no pageToken whatever the client sent, so over HTTP+JSON a page could
 * not be asked for (A2A 11.5: a GET's parameters travel in the query). Everything else is what
 * the SDK's route does: the same call context (call-context.ts: every binding's), the same
 * shared handler (which pages, registry-request-handler.ts), the same error bodies; the answer
 * keeps its empty fields (push-config-pages.ts configPageJson).
 *
 * The query's values were checked as sent by requestIntegerGuard (integer-params.ts).
 */
import express, { type Request, type Response } from 'express';
import { Extensions, HTTP_EXTENSION_HEADER, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { restStatusFor, toRestErrorBody } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { UserBuilder } from '@a2a-js/sdk/server/express';
import { untenantedContextBuilder } from './call-context.js';
import { configPageJson } from './push-config-pages.js';

const ROUTE = '/tasks/:taskId/pushNotificationConfigs';

/** A query parameter's single value ('' when absent; a repeated one was refused by the integer guard). */
const queryValue = (req: Request, name: string): string => {
  const value: unknown = req.query[name];
  return typeof value === 'string' ? value : '';
};

export function restPushConfigList(options: { requestHandler: A2ARequestHandler; userBuilder: UserBuilder }): express.Router {
  const router = express.Router();
  const list = async (req: Request<{ taskId: string; tenant?: string }>, res: Response): Promise<void> => {
    try {
      const tenant = req.params.tenant || undefined;
      // As every binding's: without the tenant, which scopes no task here (call-context.ts).
      const context = untenantedContextBuilder({
        extensions: Extensions.parseServiceParameter(req.header(HTTP_EXTENSION_HEADER)),
        user: await options.userBuilder(req),
        headers: req.headers,
        // The version the door negotiated (versions.ts).
        requestedVersion: req.header(A2A_VERSION_HEADER) || undefined,
        tenant,
      });
      const pageSize = queryValue(req, 'pageSize');
      const result = await options.requestHandler.listTaskPushNotificationConfigs(
        { tenant: tenant ?? '', taskId: req.params.taskId, pageSize: pageSize === '' ? 0 : Number(pageSize), pageToken: queryValue(req, 'pageToken') },
        context,
      );
      if (context.activatedExtensions) res.setHeader(HTTP_EXTENSION_HEADER, [...context.activatedExtensions]);
      // Every field, empty ones too (`{"configs": [], "nextPageToken": ""}`), as ListTasks answers.
      res.status(200).json(configPageJson(result));
    } catch (error) {
      const status = restStatusFor(error);
      res.status(status).json(toRestErrorBody(error, status));
    }
  };
  // The SDK's two forms of every route: without a tenant, and under one.
  router.get(ROUTE, list);
  router.get(`/:tenant${ROUTE}`, list);
  return router;
}
