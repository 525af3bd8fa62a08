/**
 * Operations endpoints, outside the REST API and its auth and login throttling (they are polled by
 * machines every few seconds and carry no account data):
 * - `GET /health`: 200 `{"status":"ok"}` while the process serves HTTP (liveness).
 * - `GET /ready`: 200 when every required dependency is up, else 503; the body lists each one.
 * - `GET /metrics`: Prometheus text exposition; with METRICS_TOKEN set, only for
 *   `Authorization: Bearer <token>` (401 otherwise).
 * See docs/decisions.md "Metrics endpoint" and "Health and readiness".
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { type NextFunction, type Request, type Response, Router } from 'express';
import type { ReadinessReport } from '../../metrics/readiness.js';

export interface ObservabilityDeps {
  readonly metrics: { exposition(): Promise<{ contentType: string; body: string }> };
  /** Bearer token required on `/metrics`, or null for an open endpoint. */
  readonly metricsToken: string | null;
  readonly readiness: { report(): Promise<ReadinessReport> };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Constant-time comparison (digests first, so lengths do not leak either). */
function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1] !== undefined && timingSafeEqual(digest(m[1]), expected);
}

export function observabilityRoutes(deps: ObservabilityDeps): Router {
  const router = Router();
  const expected = deps.metricsToken === null ? null : digest(deps.metricsToken);
  const noStore = (res: Response) => res.set('Cache-Control', 'no-store');

  router.get('/health', (_req, res) => {
    noStore(res).status(200).json({ status: 'ok' });
  });

  router.get('/ready', async (_req: Request, res: Response, next: NextFunction) => {
    try {
      const report = await deps.readiness.report();
      noStore(res)
        .status(report.status === 'ready' ? 200 : 503)
        .json(report);
    } catch (err) {
      next(err);
    }
  });

  router.get('/metrics', async (req: Request, res: Response, next: NextFunction) => {
    if (expected && !bearerMatches(req.headers.authorization, expected)) {
      noStore(res)
        .status(401)
        .set('WWW-Authenticate', 'Bearer realm="metrics"')
        .type('text/plain')
        .send('unauthorized\n');
      return;
    }
    try {
      const { contentType, body } = await deps.metrics.exposition();
      noStore(res).status(200).type(contentType).send(body);
    } catch (err) {
      next(err);
    }
  });
  return router;
}
