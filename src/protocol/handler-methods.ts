/**
 * A request handler whose every method's result passes through `wrap` (a rejection mapped, a
 * failure logged), for the decorators the doors put around the one handler. A Proxy, so methods
 * the SDK adds later are covered too; one wrapper per method, made on its first use (every
 * request asks for its method, and getAgentCard), and each method called on the handler itself,
 * whose private fields are not the proxy's.
 */
import type { A2ARequestHandler } from '@a2a-js/sdk/server';

export function wrapHandlerMethods(handler: A2ARequestHandler, wrap: (result: unknown, method: string) => unknown): A2ARequestHandler {
  const wrappers = new Map<PropertyKey, { method: unknown; wrapper: (...args: unknown[]) => unknown }>();
  return new Proxy(handler, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const made = wrappers.get(property);
      if (made?.method === value) return made.wrapper;
      const wrapper = (...args: unknown[]): unknown => wrap((value as (...a: unknown[]) => unknown).apply(target, args), String(property));
      wrappers.set(property, { method: value, wrapper });
      return wrapper;
    },
  });
}
