/**
 * Server-side state of the door: pending sign-ins (state → PKCE verifier, capped at
 * SERVICE_PENDING_SIGNINS and forgotten after PENDING_SIGNIN_TTL_MS) and signed-in sessions
 * (random id → subject, passes, CSRF token), each living SERVICE_SESSION_SECONDS from sign-in.
 * The browser holds only the session id in an HttpOnly cookie; passes never leave here.
 */

import { randomBytes } from "node:crypto";
import { MAX_SESSIONS, PENDING_SIGNIN_TTL_MS } from "./bounds.ts";
import type { Pass } from "./issuer.ts";

export interface PendingSignIn {
  readonly verifier: string;
  /** Where the browser goes after signing in: a console path (never another origin). */
  readonly returnTo: string;
  readonly resources: readonly string[];
  readonly expiresAt: number;
}

export interface Session {
  readonly id: string;
  readonly subject: string;
  readonly csrf: string;
  readonly expiresAt: number;
  /** Passes by audience (`urn:skein:store:<database>`). */
  readonly passes: Map<string, Pass>;
  readonly refreshToken: string | undefined;
}

export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

export class PendingSignIns {
  readonly #cap: number;
  readonly #byState = new Map<string, PendingSignIn>();

  constructor(cap: bigint) {
    this.#cap = cap > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(cap);
  }

  /**
   * Records a sign-in and returns its state, or undefined at the cap. At the cap new sign-ins
   * are refused (503) rather than evicting older ones: evicting would let a flood of
   * unfinished sign-ins cancel real users' sign-ins in flight; refusing lets them finish.
   */
  add(entry: Omit<PendingSignIn, "expiresAt">, now = Date.now()): string | undefined {
    this.#sweep(now);
    if (this.#byState.size >= this.#cap) return undefined;
    const state = randomToken();
    this.#byState.set(state, { ...entry, expiresAt: now + PENDING_SIGNIN_TTL_MS });
    return state;
  }

  /** Takes the sign-in of `state` (once): undefined when unknown, used or expired. */
  take(state: string, now = Date.now()): PendingSignIn | undefined {
    const entry = this.#byState.get(state);
    this.#byState.delete(state);
    return entry !== undefined && entry.expiresAt > now ? entry : undefined;
  }

  #sweep(now: number): void {
    // Insertion order is expiry order (one TTL for all), so expired entries are at the front.
    for (const [state, entry] of this.#byState) {
      if (entry.expiresAt > now) break;
      this.#byState.delete(state);
    }
  }
}

export class Sessions {
  readonly #lifetimeMs: number;
  readonly #byId = new Map<string, Session>();

  constructor(lifetimeSeconds: bigint) {
    const ms = lifetimeSeconds * 1000n;
    this.#lifetimeMs = ms > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(ms);
  }

  get lifetimeSeconds(): number {
    return Math.floor(this.#lifetimeMs / 1000);
  }

  create(subject: string, passes: Map<string, Pass>, refreshToken: string | undefined): Session {
    if (this.#byId.size >= MAX_SESSIONS) {
      const oldest = this.#byId.keys().next().value;
      if (oldest !== undefined) this.#byId.delete(oldest);
    }
    const session: Session = {
      id: randomToken(),
      subject,
      csrf: randomToken(),
      expiresAt: Date.now() + this.#lifetimeMs,
      passes,
      refreshToken,
    };
    this.#byId.set(session.id, session);
    return session;
  }

  /** The live session of `id`; an expired one is dropped and reads as none. */
  get(id: string | undefined, now = Date.now()): Session | undefined {
    if (id === undefined) return undefined;
    const session = this.#byId.get(id);
    if (session === undefined) return undefined;
    if (session.expiresAt <= now) {
      this.#byId.delete(id);
      return undefined;
    }
    return session;
  }

  end(id: string | undefined): void {
    if (id !== undefined) this.#byId.delete(id);
  }
}
