/**
 * Turns between an online backup's steps and the calls on the same connection. SQLite
 * answers a backup step that meets a write transaction on its source connection with
 * SQLITE_LOCKED; `node:sqlite` retries such a step at once, except on the first step (the
 * page count is not known yet), where it ends the backup with "not an error". Under
 * sustained writes a step could therefore fail the backup at its start, or meet a
 * transaction every time and never finish.
 *
 * So while a backup runs, each call that arrives waits for its turn (`turn()`, asked on
 * arrival). The backup starts from the call queue, so its first step runs alone. After
 * every odd step the calls that arrived meanwhile are let go, all at once (they run before
 * this thread looks for the next step's end, so the next step may meet one of them and is
 * retried); after every even step none are, and the next step runs alone. Every other step
 * copies its pages whatever the write load, and a call waits about two steps (256 pages
 * each) at most.
 */

export class BackupTurns {
  #steps = 0;
  #ended = false;
  #release: () => void = () => {};
  #next: Promise<void> = this.#nextTurn();

  /** A step has ended (node:sqlite's progress callback, on this thread). */
  stepped(): void {
    this.#steps += 1;
    if (this.#steps % 2 === 1) this.#letGo();
  }

  /** The backup has ended (copied or failed): calls go on freely. */
  ended(): void {
    this.#ended = true;
    this.#release();
  }

  /** The turn of a call arriving now: undefined once the backup has ended. */
  turn(): Promise<void> | undefined {
    return this.#ended ? undefined : this.#next;
  }

  #letGo(): void {
    const release = this.#release;
    this.#next = this.#nextTurn();
    release();
  }

  #nextTurn(): Promise<void> {
    return new Promise((resolve) => {
      this.#release = resolve;
    });
  }
}
