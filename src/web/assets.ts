/**
 * The web page's built assets (dist/web, written by web/build.ts during `npm run build`): read
 * once at start-up, kept in memory with their gzip and brotli forms (a few tens of KB), and
 * served with immutable caching, since every file name carries its content hash. The build
 * compresses them (brotli at its best quality takes about 0.4 s of CPU for these files, which
 * every start paid before), and writes each form beside its file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { Request, RequestHandler, Response } from 'express';
import { etagOf, notModified, refusedPrecondition } from '../http/conditional.js';
import { refuseMethod } from '../http/errors.js';

/** What web/build.ts writes to dist/web/manifest.json (file names relative to assets/). */
export interface WebManifest {
  script: string;
  style: string;
  icon: string;
  /** Chunks the entry script imports statically: the page preloads them beside it. */
  preload: string[];
  /** Every file under assets/. */
  files: string[];
}

/** One content coding of a body, as sent: its bytes and their own strong validator. */
export interface CodedBody {
  bytes: Buffer;
  etag: string;
}

/**
 * A body held in memory, ready to send: its type and its forms, each with its validator. A
 * content coding makes another representation, and a strong validator names one representation
 * only (RFC 9110 8.8.1, 8.8.3), so the br, gzip and identity forms each have their own ETag, over
 * their own bytes. With one ETag for all three, a cache revalidating the form it holds could be
 * told "not modified" by an answer about another coding, and serve bytes in a coding its client
 * did not ask for.
 */
export interface CachedBody {
  type: string;
  identity: CodedBody;
  gzip?: CodedBody;
  br?: CodedBody;
}

const coded = (bytes: Buffer): CodedBody => ({ bytes, etag: etagOf(bytes) });

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
};

/** The Content-Type an asset is served with, by its file name. */
export const assetType = (file: string): string => TYPES[path.extname(file)] ?? 'application/octet-stream';

/**
 * Where `npm run build` put the assets: dist/web beside the repository's src/ (running from
 * source with tsx) or beside dist/src/ (running the build).
 */
export function findAssetsDir(): string | undefined {
  const candidates = ['../../dist/web/', '../../web/'].map((rel) => fileURLToPath(new URL(rel, import.meta.url)));
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'manifest.json')));
}

/** The compressed forms of an asset, as web/build.ts writes them beside it: `<file>.gz`, `<file>.br`. */
export const ENCODED_FORMS = [
  { encoding: 'gzip', suffix: '.gz' },
  { encoding: 'br', suffix: '.br' },
] as const;

/** Compressed forms of a text body; kept only when they are smaller. */
export function compressed(body: Buffer): { gzip?: Buffer; br?: Buffer } {
  if (body.length < 512) return {};
  const gzip = gzipSync(body, { level: 9 });
  const br = brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } });
  return { ...(gzip.length < body.length ? { gzip } : {}), ...(br.length < body.length ? { br } : {}) };
}

/** Whether a body of this type is worth compressing (text; images other than SVG are compressed already). */
export const isCompressible = (type: string): boolean => type.startsWith('text/') || type.startsWith('image/svg');

/** A body with the compressed forms worth having (text only), each with its validator. */
export function cachedBody(body: Buffer, type: string): CachedBody {
  const { gzip, br } = isCompressible(type) ? compressed(body) : {};
  return { type, identity: coded(body), ...(gzip ? { gzip: coded(gzip) } : {}), ...(br ? { br: coded(br) } : {}) };
}

/**
 * The weight (q-value) an Accept-Encoding header gives each coding it names (RFC 9110 12.5.3),
 * `*` among them. An entry whose q-value is not a number is left out, as if unsent.
 */
function encodingWeights(header: string | undefined): Map<string, number> {
  const weights = new Map<string, number>();
  for (const entry of (header ?? '').split(',')) {
    const [name, ...params] = entry.split(';').map((part) => part.trim().toLowerCase());
    if (!name) continue;
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (Number.isFinite(weight) && weight >= 0 && weight <= 1) weights.set(name, weight);
  }
  return weights;
}

/**
 * The form to send: the coding the client weighs highest among those the body has, else
 * identity. Where the client's weights tie, the server's preference decides (br, then gzip, then
 * identity): browsers list gzip first ("gzip, deflate, br, zstd") without ranking it above br,
 * and following their order (as req.acceptsEncodings does) never sent them the smaller form.
 */
function chosenForm(req: Request, item: CachedBody): { coding?: 'br' | 'gzip'; form: CodedBody } {
  const weights = encodingWeights(req.headers['accept-encoding']);
  const weightOf = (coding: string) => weights.get(coding) ?? weights.get('*') ?? 0;
  // Identity is acceptable unless refused (by name, or by `*;q=0`); unnamed, it weighs no more
  // than the least coding named, so "gzip;q=0.8" still gets gzip.
  const identity = weights.get('identity') ?? weights.get('*') ?? Math.min(1, ...weights.values());
  let best: { coding?: 'br' | 'gzip'; form: CodedBody; weight: number } = { form: item.identity, weight: identity };
  for (const coding of ['gzip', 'br'] as const) {
    const form = item[coding];
    if (form && weightOf(coding) > 0 && weightOf(coding) >= best.weight) best = { coding, form, weight: weightOf(coding) };
  }
  return best.coding ? { coding: best.coding, form: best.form } : { form: item.identity };
}

/**
 * Sends a cached body in the best coding the client accepts: 304 when the client has that form
 * (its If-None-Match compared with that form's ETag, by the validator rules of every cacheable
 * answer, http/conditional.ts), 412 when its If-Match names another. Another status than 200 (the page's "not found") carries no
 * validator: conditions apply to 2xx answers only.
 */
export function sendCached(req: Request, res: Response, item: CachedBody, cacheControl: string, status = 200): void {
  res.setHeader('Content-Type', item.type);
  res.setHeader('Cache-Control', cacheControl);
  res.vary('Accept-Encoding');
  const { coding, form } = chosenForm(req, item);
  if (status === 200) {
    res.setHeader('ETag', form.etag);
    if (refusedPrecondition(req, res, form.etag)) return;
    if (notModified(req, form.etag)) {
      res.status(304).end();
      return;
    }
  }
  res.status(status);
  if (coding) res.setHeader('Content-Encoding', coding);
  res.setHeader('Content-Length', String(form.bytes.length));
  if (req.method === 'HEAD') res.end();
  else res.end(form.bytes);
}

export class WebAssets {
  private readonly assets = new Map<string, CachedBody>();

  private constructor(
    readonly manifest: WebManifest,
    dir: string,
  ) {
    for (const file of manifest.files) {
      const where = path.join(dir, 'assets', file);
      const item: CachedBody = { type: assetType(file), identity: coded(fs.readFileSync(where)) };
      for (const { encoding, suffix } of ENCODED_FORMS) {
        if (fs.existsSync(where + suffix)) item[encoding] = coded(fs.readFileSync(where + suffix));
      }
      this.assets.set(file, item);
    }
  }

  static load(dir: string): WebAssets {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as WebManifest;
    return new WebAssets(manifest, dir);
  }

  /** GET/HEAD /assets/<file>: from memory, cached for a year (the name changes with the content). */
  handler(): RequestHandler {
    return (req, res, next) => {
      const asset = this.assets.get(req.path.replace(/^\//, ''));
      if (!asset) return next();
      // An asset asked with another method is 405 with Allow (OPTIONS: 200 with it), as any
      // route's path: it was the 404 of a file that does not exist (its route is no express route
      // that http/allowed-methods.ts could find).
      if (req.method !== 'GET' && req.method !== 'HEAD') return refuseMethod(req, res, ['GET', 'HEAD']);
      sendCached(req, res, asset, 'public, max-age=31536000, immutable');
    };
  }
}
